#include "ui/inference/frame_pacer.h"

#include <cmath>
#include <stdexcept>
#include <string>

namespace wc::ui {

FramePacer::FramePacer(double frames_per_second) : rate_(frames_per_second) {
  if (!std::isfinite(rate_) || rate_ < 0.0) {
    throw std::invalid_argument("frame rate must be a finite number >= 0, got " +
                                std::to_string(rate_));
  }
}

int64_t FramePacer::on_presented(double seconds) {
  if (rate_ == 0.0) return 1;
  if (!started_) {
    // The first presented frame starts the clock and earns the first frame at once, so play
    // begins without a wait of 1/rate.
    started_ = true;
    start_s_ = seconds;
    earned_ = 1;
    return 1;
  }
  const auto due = 1 + static_cast<int64_t>(std::floor((seconds - start_s_) * rate_));
  if (due <= earned_) return 0;
  const int64_t credits = due - earned_;
  earned_ = due;
  return credits;
}

}  // namespace wc::ui
