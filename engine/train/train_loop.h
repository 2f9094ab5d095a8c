// Pieces every training loop shares: the trained weights with their optimiser, EMA and state,
// mixed precision, a step's seed, the log line and the progress bar.
#pragma once

#include <ATen/ATen.h>
#include <ATen/autocast_mode.h>
#include <torch/version.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <fstream>
#include <functional>
#include <nlohmann/json.hpp>
#include <ostream>
#include <string>
#include <vector>

#include "engine/model/dit.h"
#include "engine/train/adamw.h"
#include "engine/train/train_config.h"
#include "engine/train/train_state.h"
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

// The weights a run trains and what goes with them: the model (on the device, training mode),
// its parameters, AdamW over them, their EMA (what a player gets) and the progress.
struct TrainedWeights {
  TrainedWeights(const model::ModelConfig& model_config, const TrainConfig& config,
                 const at::Device& device);
  // Resumes the state in `state_dir`; without one, loads options.init_from through `load`
  // (model::load_weights when unset) and sets the EMA to it; else keeps the fresh weights.
  // `how` is said after the folder in the log. Throws when a state exists and options.resume is
  // off.
  void start(const std::string& state_dir, const TrainOptions& options,
             const std::function<void()>& load = {}, const std::string& how = "");
  // One step on `loss`: its gradients, `edit_gradients` (may change them before the clip), the
  // clip, AdamW at `lr`, the EMA; then progress.step = step.
  void update(const at::Tensor& loss, int64_t step, double lr, const TrainConfig& config,
              const MixedPrecision& precision, const std::function<void()>& edit_gradients = {});
  // The state, and the EMA weights exported as the playable model.
  void save(const std::string& state_dir, const std::string& model_dir, const TrainConfig& config);

  model::CausalDiT model;
  std::vector<at::Tensor> params;
  AdamW optimizer;
  std::vector<at::Tensor> ema;
  TrainProgress progress;
};

// One line of log.jsonl for a report, with `extra` fields.
void write_log_line(std::ostream& log, const StepReport& r, const nlohmann::json& extra = {});

// Note [Log after a resume]: a run that stops between checkpoints (killed, out of time, a crash)
// has logged steps its state does not hold, and the run that resumes trains them again. So the
// log is opened for appending only after its lines past `resumed_step` (and a torn last line,
// or any line that is not a step's JSON object) are dropped, the file rewritten atomically:
// every step appears once, as the weights that continue saw it. A missing log starts empty.
// Throws wc::Error naming the file when it cannot be read, rewritten or opened.
std::ofstream open_training_log(const std::string& path, int64_t resumed_step);

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
