// See train_config.h.
#include "engine/train/train_config.h"

#include <cmath>
#include <filesystem>
#include <fstream>

#include "engine/core/bounded_read.h"
#include "engine/core/json_object_reader.h"
#include "engine/core/json_text.h"

namespace wc::train {
namespace {

ClipSpec read_clips(ObjectReader& parent) {
  ObjectReader r(parent.get("clips"), parent.file(), parent.field_path("clips"));
  ClipSpec spec;
  spec.frames = r.integer("frames", 2, 64);
  spec.width = r.integer("width", 16, 1024);
  spec.height = r.integer("height", 16, 1024);
  spec.contiguous_share = r.number("contiguous_share", 0.0, 1.0);
  spec.max_walk = r.integer("max_walk", 1, 100000);
  spec.max_position = r.integer("max_position", 1, 1 << 30);
  if (r.has("agent")) {
    ObjectReader a(r.get("agent"), r.file(), r.field_path("agent"));
    spec.agent.mean_hold_frames = a.number("mean_hold_frames", 1.0, 1000.0);
    spec.agent.idle_share = a.number("idle_share", 0.0, 1.0);
    spec.agent.mean_idle_frames = a.number("mean_idle_frames", 1.0, 1000.0);
    spec.agent.return_share = a.number("return_share", 0.0, 1.0);
    spec.agent.max_return_frames = a.integer("max_return_frames", 4, 1000);
    if (a.has("push_share")) spec.agent.push_share = a.number("push_share", 0.0, 1.0);
    if (spec.agent.idle_share + spec.agent.return_share > 1.0) {
      a.fail(a.field_path("return_share"), "idle_share + return_share must be at most 1");
    }
    a.reject_unknown();
  }
  r.reject_unknown();
  return spec;
}

NoiseSpec read_noise(ObjectReader& parent) {
  ObjectReader r(parent.get("noise"), parent.file(), parent.field_path("noise"));
  NoiseSpec noise;
  noise.schedule_share = r.number("schedule_share", 0.0, 1.0);
  const nlohmann::json& levels = r.get("schedule_levels");
  if (!levels.is_array() || levels.empty()) {
    r.fail(r.field_path("schedule_levels"), "expected a non-empty array of levels in [0, 1]");
  }
  noise.schedule_levels.clear();
  for (const auto& level : levels) {
    if (!level.is_number() || level.get<double>() < 0.0 || level.get<double>() > 1.0) {
      r.fail(r.field_path("schedule_levels"), "levels must be numbers in [0, 1]");
    }
    noise.schedule_levels.push_back(level.get<double>());
  }
  noise.context_noise_share = r.number("context_noise_share", 0.0, 1.0);
  noise.max_context_noise = r.number("max_context_noise", 0.0, 1.0);
  noise.action_dropout = r.number("action_dropout", 0.0, 1.0);
  noise.dropped_action = r.integer("dropped_action", 0, 1 << 20);
  if (r.has("own_context_share")) noise.own_context_share = r.number("own_context_share", 0.0, 1.0);
  r.reject_unknown();
  return noise;
}

}  // namespace

TrainConfig parse_train_config(const nlohmann::json& json, const std::string& file) {
  ObjectReader r(json, file, "");
  TrainConfig c;
  c.file = file;
  c.model_config = r.string("model_config");
  if (std::filesystem::path(c.model_config).is_relative() && !file.empty()) {
    c.model_config =
        (std::filesystem::path(file).parent_path() / c.model_config).lexically_normal().string();
  }
  c.seed = static_cast<uint64_t>(r.integer("seed", 0, 1 << 30));
  c.batch = r.integer("batch", 1, 4096);
  c.clips = read_clips(r);
  c.noise = read_noise(r);
  if (r.has("tokens")) {
    ObjectReader t(r.get("tokens"), file, "tokens");
    c.has_tokens = true;
    c.tokens.noisy_frames = t.integer("noisy_frames", 1, c.clips.frames - 1);
    c.tokens.new_ground_weight = t.number("new_ground_weight", 0.0, 1000.0);
    if (t.has("overlay_weight")) c.tokens.overlay_weight = t.number("overlay_weight", 0.0, 1000.0);
    c.tokens.corrupt_share = t.number("corrupt_share", 0.0, 1.0);
    c.tokens.max_corrupt = t.number("max_corrupt", 0.0, 1.0);
    if (t.has("overlay_corrupt_share")) {
      c.tokens.overlay_corrupt_share = t.number("overlay_corrupt_share", 0.0, 1.0);
    }
    if (t.has("own_share")) c.tokens.own_share = t.number("own_share", 0.0, 1.0);
    if (t.has("drawn_share")) c.tokens.drawn_share = t.number("drawn_share", 0.0, 1.0);
    if (t.has("drawn_temperature")) {
      c.tokens.drawn_temperature = t.number("drawn_temperature", 0.05, 100.0);
    }
    if (t.has("drawn_quarters_share")) {
      c.tokens.drawn_quarters_share = t.number("drawn_quarters_share", 0.0, 1.0);
    }
    if (c.tokens.own_share + c.tokens.drawn_share > 1.0) {
      t.fail(t.field_path("drawn_share"),
             "own_share and drawn_share together exceed the whole batch");
    }
    t.reject_unknown();
  }
  {
    ObjectReader o(r.get("optimizer"), file, "optimizer");
    c.learning_rate = o.number("learning_rate", 1e-7, 1.0);
    c.optimizer.beta1 = o.number("beta1", 0.0, 0.99999);
    c.optimizer.beta2 = o.number("beta2", 0.0, 0.99999);
    c.optimizer.eps = o.number("eps", 1e-12, 1e-2);
    c.optimizer.weight_decay = o.number("weight_decay", 0.0, 1.0);
    c.warmup_steps = o.integer("warmup_steps", 0, 1 << 30);
    c.steps = o.integer("steps", 0, 1 << 30);
    c.grad_clip = o.number("grad_clip", 0.0, 1e6);
    c.ema_decay = o.number("ema_decay", 0.0, 0.999999);
    o.reject_unknown();
  }
  c.data_workers = r.integer("data_workers", 1, 256);
  c.checkpoint_minutes = r.number("checkpoint_minutes", 0.01, 1e6);
  c.log_every = r.integer("log_every", 1, 1 << 20);
  c.state_dtype = r.string("state_dtype");
  if (c.state_dtype != "f32" && c.state_dtype != "bf16") {
    r.fail("state_dtype", "expected \"f32\" or \"bf16\", got \"" + c.state_dtype + "\"");
  }
  r.reject_unknown();
  return c;
}

TrainConfig load_train_config(const std::string& path) {
  const std::string text = read_bounded_file(path, kMaxTrainConfigBytes, "training config");
  return parse_train_config(parse_json(text, path), path);
}

double learning_rate_at(const TrainConfig& config, int64_t step) {
  const double peak = config.learning_rate;
  if (step <= config.warmup_steps) {
    return peak * static_cast<double>(step) /
           static_cast<double>(std::max<int64_t>(1, config.warmup_steps));
  }
  if (config.steps <= config.warmup_steps) return peak;
  const double progress =
      std::min(1.0, static_cast<double>(step - config.warmup_steps) /
                        static_cast<double>(config.steps - config.warmup_steps));
  return peak * (0.1 + 0.9 * 0.5 * (1.0 + std::cos(M_PI * progress)));
}

}  // namespace wc::train
