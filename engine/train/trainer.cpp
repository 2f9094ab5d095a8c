// See trainer.h.
#include <ATen/core/grad_mode.h>

#include "engine/train/trainer.h"

#include <ATen/autocast_mode.h>
#include <torch/nn/utils/clip_grad.h>
#include <torch/version.h>

#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <functional>
#include <memory>
#include <nlohmann/json.hpp>

#include "engine/core/error.h"
#include "engine/core/log.h"
#include "engine/core/timing.h"
#include "engine/model/dit.h"
#include "engine/model/model_config.h"
#include "engine/model/prediction.h"
#include "engine/model/weights.h"
#include "engine/rollout/kernel_trace.h"
#include "engine/train/adamw.h"
#include "engine/train/clip_stream.h"
#include "engine/train/teacher_forcing.h"
#include "engine/train/token_trainer.h"
#include "engine/train/train_loop.h"
#include "engine/train/train_state.h"

namespace wc::train {
namespace {

namespace fs = std::filesystem;

// The network's output for the noisy frames of `batch` as a velocity (Note [Previous-frame
// skip]), float32, with the frame before each block in the batch's history as the reference.
at::Tensor noisy_velocity(model::CausalDiTImpl& model, const TeacherForcingBatch& batch,
                          const at::Tensor& mask) {
  const model::ModelConfig& config = model.config();
  const at::Tensor output = model.forward_masked(batch.input, mask).slice(1, batch.noisy_first);
  const at::Tensor reference =
      config.prediction.previous_frame_skip
          ? model::previous_frame_reference(batch.history, config.frames_per_block)
          : at::Tensor();
  const at::Tensor x_t = batch.input.frames.slice(1, batch.noisy_first);
  const at::Tensor t = batch.input.t.slice(1, batch.noisy_first);
  return model::velocity_from_output(config.prediction, output.to(at::kFloat), x_t, t, reference);
}

// The model's own history for the clips batch.own_context chose ([B, F − fpb, ...]; other rows
// are unused), predicted in one gradient-free pass, x̂0 = x_t − t·v (Note [Own context]).
at::Tensor own_history(model::CausalDiTImpl& model, const TeacherForcingBatch& batch,
                       const at::Tensor& mask) {
  at::NoGradGuard no_grad;
  const at::Tensor x_t = batch.input.frames.slice(1, batch.noisy_first);
  const at::Tensor t = batch.input.t.slice(1, batch.noisy_first);
  return x_t - t.view({t.size(0), t.size(1), 1, 1, 1}) * noisy_velocity(model, batch, mask);
}

// Copies every trained tensor of the model in `dir` into `model`, through a model of the
// checkpoint's own config (`from`), whose output may mean something else (no skip). The output
// head's projection is left to `set_head` (its name, the trained tensor or null, the model's);
// every other tensor must be there with the same shape, and `what_may_differ` says in the error
// what could.
void copy_trained_layers(
    model::CausalDiTImpl& model, const std::string& dir, const model::ModelConfig& from,
    const std::function<void(const std::string&, const at::Tensor*, at::Tensor&)>& set_head,
    const std::string& what_may_differ) {
  const std::string config_file = (fs::path(dir) / "config.json").string();
  model::CausalDiT source(from);
  model::load_weights(source, dir);
  const auto trained = source->named_parameters(/*recurse=*/true);
  at::NoGradGuard no_grad;
  for (auto& item : model.named_parameters(/*recurse=*/true)) {
    at::Tensor p = item.value();
    const at::Tensor* found = trained.find(item.key());
    if (item.key().rfind("head.proj.", 0) == 0) {
      set_head(item.key(), found, p);
      continue;
    }
    if (found == nullptr || found->sizes() != p.sizes()) {
      throw Error(config_file, "tensor '" + item.key() +
                                   "': the training config's model differs here, and only " +
                                   what_may_differ + " may be new");
    }
    p.copy_(*found);
  }
}

// A new output head over the trained layers of the model in `dir` (TrainOptions::init_new_head).
void load_with_new_head(model::CausalDiTImpl& model, const std::string& dir) {
  const std::string config_file = (fs::path(dir) / "config.json").string();
  copy_trained_layers(
      model, dir, model::load_model_config(config_file),
      [](const std::string&, const at::Tensor*, at::Tensor& head) { head.zero_(); },
      "the output head");
}

// mean((prediction − target)²): the velocity's squared error.
at::Tensor squared_error(const at::Tensor& prediction, const at::Tensor& target) {
  return (prediction - target).pow(2).mean();
}

}  // namespace

void init_training_weights(model::CausalDiTImpl& model, uint64_t seed) {
  model::CausalDiT holder(std::shared_ptr<model::CausalDiTImpl>(&model, [](auto*) {}));
  model::init_random_weights(holder, seed);
  at::NoGradGuard no_grad;
  for (auto& item : model.named_parameters(/*recurse=*/true)) {
    const std::string& name = item.key();
    at::Tensor p = item.value();
    const bool gate_path = name.rfind("time_proj.", 0) == 0 ||
                           name.find(".modulation") != std::string::npos ||
                           name.rfind("head.proj.", 0) == 0 || name == "head.modulation";
    if (gate_path) p.zero_();
    if (name.find("norm_") != std::string::npos) p.fill_(1.0);
  }
}

TrainReport train(const TrainConfig& config, const TrainOptions& options,
                  const std::function<void(const StepReport&)>& on_log) {
  if (options.out_dir.empty()) throw Error("train", "an output folder is required");
  if (options.init_new_head && options.init_from.empty()) {
    throw Error("train", "a new output head needs weights to start from (--init)");
  }
  const model::ModelConfig model_config = model::load_model_config(config.model_config);
  if (config.clips.width != model_config.frame.width ||
      config.clips.height != model_config.frame.height) {
    throw Error(config.file, "field 'clips': frame size differs from the model config's frame");
  }
  if (!options.trace_file.empty() && !model_config.tokens.active()) {
    throw Error("--trace", "a kernel trace is recorded for token models only (" +
                               model_config.file + " has no \"tokens\")");
  }
  if (!options.trace_file.empty()) {
    // Refused before any work: a build that cannot record, or a folder that is not there.
    if (!rollout::KernelTrace::available()) {
      throw Error("--trace", "this build cannot record kernel traces (LibTorch 2 with CUDA)");
    }
    const fs::path parent = fs::absolute(options.trace_file).parent_path();
    if (!fs::is_directory(parent)) {
      throw Error("--trace",
                  "no folder " + parent.string() + " to write " + options.trace_file + " into");
    }
  }
  if (model_config.tokens.active()) return train_token_model(config, model_config, options, on_log);
  if (config.has_tokens) {
    throw Error(config.file, "field 'tokens': only for a token model (" + model_config.file +
                                 " has no \"tokens\")");
  }
  if (config.clips.width != model_config.frame.width ||
      config.clips.height != model_config.frame.height) {
    throw Error(config.file, "field 'clips': frame size differs from the model config's frame");
  }
  if (config.clips.frames % model_config.frames_per_block != 0 ||
      config.clips.frames < 2 * model_config.frames_per_block) {
    throw Error(
        config.file,
        "field 'clips.frames': must be a multiple of frames_per_block, at least two blocks");
  }
  if (config.noise.dropped_action >= model_config.num_actions) {
    throw Error(config.file,
                "field 'noise.dropped_action': must be below the model's num_actions (" +
                    std::to_string(model_config.num_actions) + ")");
  }
  const fs::path out(options.out_dir);
  const std::string state_dir = (out / "state").string();
  const std::string model_dir = (out / "model").string();
  fs::create_directories(out);

  TrainedWeights weights(model_config, config, options.device);
  weights.start(
      state_dir, options,
      [&] {
        if (options.init_new_head) {
          load_with_new_head(*weights.model, options.init_from);
        } else {
          model::load_weights(weights.model, options.init_from);
        }
      },
      options.init_new_head ? " (output head zeroed)" : "");
  model::CausalDiT& model = weights.model;
  TrainProgress& progress = weights.progress;
  TrainReport report;
  report.first_step = progress.step;
  report.model_dir = model_dir;

  const int64_t target = options.max_steps > 0 ? options.max_steps : config.steps;
  const int grid_h = model_config.grid_h(model_config.frame),
            grid_w = model_config.grid_w(model_config.frame);
  const int tokens_per_frame = grid_h * grid_w;
  ClipStream stream(config.clips, config.batch, config.seed, progress.step, config.data_workers);
  MixedPrecision precision(options.device);
  std::ofstream log_file = open_training_log((out / "log.jsonl").string(), progress.step);

  Stopwatch call_time;
  Stopwatch since_checkpoint;
  Stopwatch window_time;
  const double seconds_before = progress.seconds;
  double loss_sum = 0.0;
  int loss_count = 0;
  int64_t window_clips = 0;
  at::Tensor loss_accumulator = at::zeros({}, at::TensorOptions().device(options.device));
  double window_wait_ms = 0.0;
  // One mask for the whole run: every batch has the same clip length and frame size.
  const at::Tensor mask =
      two_stream_mask(config.clips.frames, tokens_per_frame, model_config.frames_per_block)
          .to(options.device);
  const auto save = [&] {
    progress.seconds = seconds_before + call_time.elapsed_ms() / 1000.0;
    weights.save(state_dir, model_dir, config);
    since_checkpoint.restart();
  };

  while ((target <= 0 || progress.step < target) &&
         (options.minutes <= 0.0 || call_time.elapsed_ms() < options.minutes * 60000.0)) {
    Stopwatch wait_time;
    const ClipBatch clips = stream.next();
    window_wait_ms += wait_time.elapsed_ms();
    const int64_t step = progress.step + 1;
    TeacherForcingBatch batch = make_teacher_forcing_batch(
        clips, config.noise, tokens_per_frame, model_config.frames_per_block,
        step_seed(config.seed, step), options.device);
    if (batch.own_context.any().item<bool>()) {
      use_own_context(batch, own_history(*model, batch, mask), batch.own_context,
                      model_config.frames_per_block);
    }
    const at::Tensor loss = squared_error(noisy_velocity(*model, batch, mask), batch.target);
    const double lr = learning_rate_at(config, step);
    weights.update(loss, step, lr, config, precision);
    loss_accumulator += loss.detach();
    ++loss_count;
    window_clips += config.batch;

    if (step % config.log_every == 0 || step == target) {
      loss_sum = loss_accumulator.item<double>();
      loss_accumulator.zero_();
      StepReport r;
      r.step = step;
      r.loss = loss_sum / std::max(1, loss_count);
      r.learning_rate = lr;
      r.clips_per_second = window_clips / std::max(1e-9, window_time.elapsed_ms() / 1000.0);
      r.seconds = seconds_before + call_time.elapsed_ms() / 1000.0;
      r.data_wait_share = window_wait_ms / std::max(1e-9, window_time.elapsed_ms());
      if (!std::isfinite(r.loss))
        throw Error(state_dir,
                    "training diverged: loss is not finite at step " + std::to_string(step));
      report.last_loss = r.loss;
      report.clips_per_second = r.clips_per_second;
      write_log_line(log_file, r);
      if (options.progress_bar) {
        const double left =
            options.minutes > 0 ? options.minutes - call_time.elapsed_ms() / 60000.0 : -1.0;
        print_bar(r, target, left);
      }
      if (on_log) on_log(r);
      loss_count = 0;
      window_clips = 0;
      window_wait_ms = 0.0;
      window_time.restart();
    }
    if (since_checkpoint.elapsed_ms() >= config.checkpoint_minutes * 60000.0) save();
  }
  if (options.progress_bar) std::fputs("\n", stderr);
  save();
  report.steps = progress.step;
  report.seconds = progress.seconds;
  log_info("train: step " + std::to_string(progress.step) + ", " +
           std::to_string(progress.seconds / 60.0) + " min in all; model in " + model_dir);
  return report;
}

}  // namespace wc::train
