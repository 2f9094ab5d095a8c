// A FrameSource for hand-off tests: every pixel of a frame carries its frame index (R, G) and the
// action that made it (B), so a torn, stale or mislabelled frame is visible in any pixel.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "engine/rollout/frame_source.h"

namespace wc::ui::testing {

class CounterSource final : public FrameSource {
 public:
  CounterSource(int width, int height) : width_(width), height_(height) {
    pixels_.resize(static_cast<size_t>(width) * height * 4);
    reset(0);
  }

  std::string name() const override { return "counter"; }
  int width() const override { return width_; }
  int height() const override { return height_; }
  void reset(uint64_t) override {
    frame_ = 0;
    fill(Action::kNone);
  }
  void step(Action action) override {
    ++frame_;
    fill(action);
  }
  const uint8_t* rgba() const override { return pixels_.data(); }
  uint64_t frame_index() const override { return frame_; }

  // What a pixel says: the frame index (mod 2^16) and the action.
  static uint32_t index_of(const uint8_t* pixel) { return pixel[0] | (pixel[1] << 8); }
  static Action action_of(const uint8_t* pixel) { return static_cast<Action>(pixel[2]); }

 private:
  void fill(Action action) {
    for (size_t p = 0; p < pixels_.size(); p += 4) {
      pixels_[p] = static_cast<uint8_t>(frame_);
      pixels_[p + 1] = static_cast<uint8_t>(frame_ >> 8);
      pixels_[p + 2] = static_cast<uint8_t>(action);
      pixels_[p + 3] = 255;
    }
  }

  int width_;
  int height_;
  uint64_t frame_ = 0;
  std::vector<uint8_t> pixels_;
};

}  // namespace wc::ui::testing
