// A training run's settings, read from JSON (assets/train/*.json) with every field checked.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>

#include "engine/train/train_specs.h"
#include "engine/train/training_clip.h"

namespace wc::train {

// A training config is a few KB; larger is not one (Note [Bounded reads]).
inline constexpr int64_t kMaxTrainConfigBytes = int64_t{4} << 20;

struct TrainConfig {
  std::string file;          // where it was read from, for messages
  std::string model_config;  // path of the model config (relative paths: to this file's folder)
  uint64_t seed = 1;
  int batch = 32;
  ClipSpec clips;
  NoiseSpec noise;
  // A token model's Note [Masked training] ("tokens" section; required for a token model, refused
  // for a pixel model). Of "noise" it uses action_dropout and dropped_action.
  TokenSpec tokens;
  bool has_tokens = false;
  AdamWSettings optimizer;
  double learning_rate = 6e-4;
  int64_t warmup_steps = 300;
  int64_t steps = 0;  // 0: until stopped (--minutes); else cosine decay to 10% by then
  double grad_clip = 1.0;
  double ema_decay = 0.999;
  int data_workers = 8;
  double checkpoint_minutes = 2.0;
  int log_every = 25;
  // "bf16" halves the saved training state (weights, EMA, moments) so a run can be carried
  // between 10-minute GPU sessions within the 64 MB carry limit; "f32" resumes bit-exactly.
  std::string state_dtype = "f32";
};

// Throws wc::Error "<file>: field '<path>': <what>" for anything missing, unknown or invalid.
TrainConfig parse_train_config(const nlohmann::json& json, const std::string& file);
TrainConfig load_train_config(const std::string& path);

// The learning rate at `step` (1-based): linear warm-up, then constant or cosine to 10%.
double learning_rate_at(const TrainConfig& config, int64_t step);

}  // namespace wc::train
