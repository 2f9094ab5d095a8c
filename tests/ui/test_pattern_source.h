// A deterministic FrameSource for renderer tests: every pixel differs from its neighbours, the
// pattern moves with the frame index and the action, so a wrong texel, row order or stale frame
// shows up as a mismatch.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "engine/rollout/frame_source.h"

namespace wc::ui::testing {

class TestPatternSource final : public FrameSource {
 public:
  TestPatternSource(int width, int height) : width_(width), height_(height) {
    pixels_.resize(static_cast<size_t>(width) * height * 4);
    reset(0);
  }

  std::string name() const override { return "test-pattern"; }
  int width() const override { return width_; }
  int height() const override { return height_; }
  void reset(uint64_t seed) override {
    seed_ = seed;
    frame_ = 0;
    offset_ = 0;
    draw();
  }
  void step(Action action) override {
    ++frame_;
    offset_ += 1 + static_cast<int>(action);
    draw();
  }
  const uint8_t* rgba() const override { return pixels_.data(); }
  uint64_t frame_index() const override { return frame_; }

 private:
  void draw() {
    for (int y = 0; y < height_; ++y) {
      for (int x = 0; x < width_; ++x) {
        uint8_t* p = &pixels_[(static_cast<size_t>(y) * width_ + x) * 4];
        p[0] = static_cast<uint8_t>(x * 7 + offset_ * 3);
        p[1] = static_cast<uint8_t>(y * 11 + static_cast<int>(seed_ * 13));
        p[2] = static_cast<uint8_t>((x ^ y) * 5 + offset_);
        p[3] = 255;
      }
    }
  }

  int width_;
  int height_;
  uint64_t seed_ = 0;
  uint64_t frame_ = 0;
  int offset_ = 0;
  std::vector<uint8_t> pixels_;
};

// The CPU reference of the present pass with nearest sampling: `rgba` upscaled into `rect`,
// `bar` everywhere else.
inline std::vector<uint8_t> reference_present(const uint8_t* rgba, int frame_width,
                                              int frame_height, int target_width, int target_height,
                                              int rect_x, int rect_y, int rect_width,
                                              int rect_height, const uint8_t bar[4]) {
  std::vector<uint8_t> out(static_cast<size_t>(target_width) * target_height * 4);
  for (int y = 0; y < target_height; ++y) {
    for (int x = 0; x < target_width; ++x) {
      uint8_t* o = &out[(static_cast<size_t>(y) * target_width + x) * 4];
      const int lx = x - rect_x;
      const int ly = y - rect_y;
      if (lx < 0 || ly < 0 || lx >= rect_width || ly >= rect_height) {
        for (int c = 0; c < 4; ++c) o[c] = bar[c];
        continue;
      }
      const int sx = lx * frame_width / rect_width;
      const int sy = ly * frame_height / rect_height;
      const uint8_t* s = &rgba[(static_cast<size_t>(sy) * frame_width + sx) * 4];
      for (int c = 0; c < 4; ++c) o[c] = s[c];
    }
  }
  return out;
}

}  // namespace wc::ui::testing
