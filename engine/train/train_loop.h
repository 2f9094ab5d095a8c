// Pieces every training loop shares: mixed precision, a step's seed, the progress bar.
#pragma once

#include <ATen/ATen.h>
#include <ATen/autocast_mode.h>
#include <torch/version.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <string>

#include "engine/train/trainer.h"

namespace wc::train {

// bf16 autocast on CUDA (LibTorch 2.x); float32 elsewhere. The cast cache must be dropped after
// every step, or the next forward would reuse bf16 copies of the old weights.
class MixedPrecision {
 public:
  explicit MixedPrecision(const at::Device& device) {
#if TORCH_VERSION_MAJOR >= 2
    enabled_ = device.is_cuda();
    if (enabled_) {
      at::autocast::set_autocast_dtype(at::kCUDA, at::kBFloat16);
      at::autocast::set_autocast_enabled(at::kCUDA, true);
    }
#else
    (void)device;
#endif
  }
  ~MixedPrecision() {
#if TORCH_VERSION_MAJOR >= 2
    if (enabled_) {
      at::autocast::set_autocast_enabled(at::kCUDA, false);
      at::autocast::clear_cache();
    }
#endif
  }
  void end_step() const {
#if TORCH_VERSION_MAJOR >= 2
    if (enabled_) at::autocast::clear_cache();
#endif
  }
  bool enabled() const {
    return enabled_;
  }

 private:
  bool enabled_ = false;
};

inline uint64_t step_seed(uint64_t seed, int64_t step) {
  return seed * 0x100000001B3ull + static_cast<uint64_t>(step) * 0x9E3779B97F4A7C15ull + 17;
}


inline void print_bar(const StepReport& r, int64_t target_steps, double minutes_left) {
  char line[256];
  const int width = 24;
  int filled = 0;
  if (target_steps > 0)
    filled = static_cast<int>(width * std::min(1.0, double(r.step) / target_steps));
  std::string bar(static_cast<size_t>(filled), '#');
  bar.resize(width, '.');
  std::snprintf(line, sizeof(line),
                "\r[%s] step %lld  loss %.4f  lr %.2e  %.0f clips/s (%.0f%% data wait)  %.1f min%s",
                bar.c_str(), static_cast<long long>(r.step), r.loss, r.learning_rate,
                r.clips_per_second, 100.0 * r.data_wait_share, r.seconds / 60.0,
                minutes_left >= 0
                    ? (" (" + std::to_string(int(minutes_left * 60)) + " s left)").c_str()
                    : "");
  std::fputs(line, stderr);
  std::fflush(stderr);
}

}  // namespace wc::train
