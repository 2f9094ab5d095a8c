// The training loop of the bundled world model: clips from the reference game, two-stream
// teacher forcing with per-frame noise levels (diffusion forcing), AdamW, an EMA of the weights,
// periodic resumable checkpoints and the exported playable model.
#pragma once

#include <ATen/ATen.h>

#include <cstdint>
#include <functional>
#include <string>

#include "engine/model/dit.h"
#include "engine/train/adamw.h"
#include "engine/train/train_config.h"

namespace wc::train {

struct TrainOptions {
  std::string out_dir;  // state/, model/ and log.jsonl go here; an existing state resumes
  at::Device device = at::kCPU;
  double minutes = 0.0;      // stop (and save) after this much wall time in this call; 0 = none
  int64_t max_steps = 0;     // stop at this step count; 0 = the config's steps (or none)
  bool resume = true;        // false: refuse to start when out_dir already holds a state
  bool progress_bar = true;  // a one-line bar on stderr; log lines go through wc::log either way
  // Without a state to resume: start from these exported weights (a model folder) instead of a
  // fresh initialisation, with fresh optimiser moments (fine-tuning, or continuing a run whose
  // state was lost).
  std::string init_from;
  // With init_from: zero the output head's projection after loading, so a model whose output
  // changes meaning (a config that adds the previous-frame skip) keeps the trained layers and
  // starts from a zero output (with the skip: a copy of the previous frame). The other tensors
  // must match.
  bool init_new_head = false;
  // A token model's run: a kernel trace (engine/rollout/kernel_trace.h) of this call's third step
  // (the first two warm the allocator and the kernels) written here; "" = none. Only builds
  // whose KernelTrace is available record one; train() refuses it before any work elsewhere, or
  // when the file's folder does not exist.
  std::string trace_file;
};

struct StepReport {
  int64_t step = 0;
  double loss = 0.0;
  double learning_rate = 0.0;
  double clips_per_second = 0.0;
  double seconds = 0.0;  // total training time so far
  // Share of the logging window the training loop spent waiting for clips: near 0 when the
  // accelerator is the bottleneck, large when the data workers are.
  double data_wait_share = 0.0;
};

struct TrainReport {
  int64_t first_step = 0;  // the step this call resumed from
  int64_t steps = 0;       // the step count reached
  double seconds = 0.0;    // total training wall time over every call
  double last_loss = 0.0;  // mean loss of the last logging window
  double clips_per_second = 0.0;
  std::string model_dir;
};

// Trains until options.minutes, options.max_steps or config.steps is reached, saving the state
// every config.checkpoint_minutes and at the end, then exports the EMA weights to out_dir/model.
// `on_log` (optional) sees every logging step.
TrainReport train(const TrainConfig& config, const TrainOptions& options,
                  const std::function<void(const StepReport&)>& on_log = {});

// Initial weights for training (adaLN-zero: every residual gate and the output projection start
// at zero, so the untrained network is the identity on its residual stream and predicts zero).
void init_training_weights(model::CausalDiTImpl& model, uint64_t seed);

}  // namespace wc::train
