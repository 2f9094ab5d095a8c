// See train_loop.h.
#include "engine/train/train_loop.h"

#include <ATen/core/grad_mode.h>
#include <torch/nn/utils/clip_grad.h>

#include <filesystem>
#include <sstream>

#include "engine/core/atomic_file.h"
#include "engine/core/error.h"
#include "engine/core/log.h"
#include "engine/model/memory_budget.h"
#include "engine/model/weights.h"

namespace wc::train {
namespace {

model::CausalDiT training_model(const model::ModelConfig& model_config, const TrainConfig& config,
                                const at::Device& device) {
  // Note [Memory budget]: a clip's frames are the floor of one step's sequence.
  const int64_t tokens = int64_t{config.clips.frames} *
                         (config.clips.height / model_config.patch_h) *
                         (config.clips.width / model_config.patch_w);
  model::require_memory(model_config.file.empty() ? model_config.name : model_config.file,
                        model::training_memory(model_config, device, config.batch, tokens), device);
  model::CausalDiT model(model_config);
  init_training_weights(*model, config.seed);
  model->to(device);
  model->train();
  return model;
}

std::vector<at::Tensor> copies(const std::vector<at::Tensor>& params) {
  std::vector<at::Tensor> out;
  for (const at::Tensor& p : params) out.push_back(p.detach().clone());
  return out;
}

}  // namespace

TrainedWeights::TrainedWeights(const model::ModelConfig& model_config, const TrainConfig& config,
                               const at::Device& device)
    : model(training_model(model_config, config, device)),
      params(model->parameters()),
      optimizer(params, config.optimizer),
      ema(copies(params)) {}

void TrainedWeights::start(const std::string& state_dir, const TrainOptions& options,
                           const std::function<void()>& load, const std::string& how) {
  if (load_train_state(state_dir, *model, ema, optimizer, &progress)) {
    if (!options.resume) throw Error(state_dir, "a training state exists and resuming is off");
    log_info("train: resuming from step " + std::to_string(progress.step) + " (" + state_dir + ")");
  } else if (!options.init_from.empty()) {
    if (load) {
      load();
    } else {
      model::load_weights(model, options.init_from);
    }
    at::NoGradGuard no_grad;
    for (size_t i = 0; i < params.size(); ++i) ema[i].copy_(params[i]);
    log_info("train: starting from the weights in " + options.init_from + how);
  }
}

void TrainedWeights::update(const at::Tensor& loss, int64_t step, double lr,
                            const TrainConfig& config, const MixedPrecision& precision,
                            const std::function<void()>& edit_gradients) {
  for (at::Tensor& p : params) p.mutable_grad() = at::Tensor();
  loss.backward();
  precision.end_step();
  if (edit_gradients) edit_gradients();
  if (config.grad_clip > 0.0) torch::nn::utils::clip_grad_norm_(params, config.grad_clip);
  optimizer.step(lr);
  {
    at::NoGradGuard no_grad;
    at::_foreach_mul_(ema, config.ema_decay);
    at::_foreach_add_(ema, params, 1.0 - config.ema_decay);
  }
  progress.step = step;
}

void TrainedWeights::save(const std::string& state_dir, const std::string& model_dir,
                          const TrainConfig& config) {
  save_train_state(state_dir, *model, ema, optimizer, progress, config.state_dtype);
  export_model(model_dir, *model, ema);  // the EMA weights: what a player gets
}

void write_log_line(std::ostream& log, const StepReport& r, const nlohmann::json& extra) {
  nlohmann::json line{{"step", r.step},        {"loss", r.loss},
                      {"lr", r.learning_rate}, {"clips_per_second", r.clips_per_second},
                      {"seconds", r.seconds},  {"data_wait_share", r.data_wait_share}};
  if (extra.is_object()) line.update(extra);
  log << line.dump() << "\n" << std::flush;
}

std::ofstream open_training_log(const std::string& path, int64_t resumed_step) {
  namespace fs = std::filesystem;
  if (fs::exists(path)) {
    std::ifstream in(path);
    if (!in) throw Error(path, "the training log cannot be read");
    std::string line, kept;
    int64_t dropped = 0;
    while (std::getline(in, line)) {
      // Steps are whole JSON objects with an integer "step"; anything else is a torn write.
      const nlohmann::json j = nlohmann::json::parse(line, nullptr, /*allow_exceptions=*/false);
      const bool step_line = j.is_object() && j.contains("step") && j["step"].is_number_integer();
      if (step_line && j["step"].get<int64_t>() <= resumed_step) {
        kept += line + "\n";
      } else {
        ++dropped;
      }
    }
    if (in.bad()) throw Error(path, "the training log cannot be read");
    if (dropped > 0) {
      write_file_atomically(path, kept);
      log_info("train: dropped " + std::to_string(dropped) + " line(s) of " + path +
               " past the resumed step " + std::to_string(resumed_step));
    }
  }
  std::ofstream log(path, std::ios::app);
  if (!log) throw Error(path, "the training log cannot be opened for writing");
  return log;
}

}  // namespace wc::train
