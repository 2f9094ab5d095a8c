// FramePacer (Note [Game frame rate]): credits per presented frame, on a clock or not.
#include "ui/inference/frame_pacer.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <stdexcept>

namespace wc::ui {
namespace {

TEST(FramePacer, WithoutARateEveryPresentedFrameEarnsOne) {
  FramePacer pacer;
  for (double t : {0.0, 0.0, 0.001, 5.0}) EXPECT_EQ(pacer.on_presented(t), 1);
}

TEST(FramePacer, ARateEarnsOnTheClockFromTheFirstPresentedFrame) {
  FramePacer pacer(15.0);
  EXPECT_EQ(pacer.on_presented(100.0), 1);  // play starts at once
  // A 60 Hz display: the next credit comes at the fourth frame after, 1/15 s later.
  EXPECT_EQ(pacer.on_presented(100.0 + 1.0 / 60), 0);
  EXPECT_EQ(pacer.on_presented(100.0 + 2.0 / 60), 0);
  EXPECT_EQ(pacer.on_presented(100.0 + 3.0 / 60), 0);
  EXPECT_EQ(pacer.on_presented(100.0 + 4.0 / 60 + 1e-9), 1);
  // A stall of one second earns that second's frames (the caller caps what it banks).
  EXPECT_EQ(pacer.on_presented(101.0 + 4.0 / 60 + 1e-9), 15);
}

TEST(FramePacer, CreditsOverAnyRunMatchTheRate) {
  for (double rate : {7.5, 15.0, 24.0, 144.0}) {
    FramePacer pacer(rate);
    int64_t total = 0;
    const double display_hz = 59.94;
    const int frames = 6000;
    for (int i = 0; i < frames; ++i) total += pacer.on_presented(3.25 + i / display_hz);
    const double seconds = (frames - 1) / display_hz;
    // Faster than the display is capped by the display in practice, but the clock still counts.
    EXPECT_EQ(total, 1 + static_cast<int64_t>(std::floor(seconds * rate))) << rate;
  }
}

TEST(FramePacer, RejectsNegativeAndNonFiniteRates) {
  EXPECT_THROW(FramePacer(-1.0), std::invalid_argument);
  EXPECT_THROW(FramePacer(std::numeric_limits<double>::quiet_NaN()), std::invalid_argument);
  EXPECT_THROW(FramePacer(std::numeric_limits<double>::infinity()), std::invalid_argument);
}

}  // namespace
}  // namespace wc::ui
