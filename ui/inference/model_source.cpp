// See model_source.h.
#include "ui/inference/model_source.h"

#include <torch/cuda.h>

#include <filesystem>

#include "engine/attention/headcast/head_type.h"
#include "engine/attention/registry.h"
#include "engine/core/error.h"
#include "engine/core/json_text.h"
#include "engine/core/safetensors.h"
#include "engine/model/model_config.h"
#include "engine/model/play_settings.h"

namespace wc::ui {
namespace fs = std::filesystem;

model::ModelConfig model_config_for(const ModelSourceOptions& options, std::string* file) {
  if (!options.config.empty()) {
    *file = options.config;
    return model::load_model_config(options.config);
  }
  if (options.weights.empty()) {
    const std::string path = find_asset(kDefaultModelConfig);
    if (path.empty()) throw Error(kDefaultModelConfig, "not found (pass --config FILE)");
    *file = path;
    return model::load_model_config(path);
  }
  const fs::path beside = fs::path(options.weights) / "config.json";
  if (fs::is_directory(options.weights) && fs::exists(beside)) {
    *file = beside.string();
    return model::load_model_config(beside.string());
  }
  // save_weights stores the config in the checkpoint's metadata.
  const Checkpoint checkpoint = Checkpoint::open(options.weights);
  const auto it = checkpoint.metadata().find("config");
  if (it == checkpoint.metadata().end()) {
    throw Error(options.weights,
                "no config.json beside the weights and no 'config' in the checkpoint metadata "
                "(pass --config FILE)");
  }
  const nlohmann::json json = parse_json(it->second, options.weights + ": metadata field 'config'");
  *file = options.weights + " (checkpoint metadata)";
  return model::parse_checkpoint_config(json, *file, options.weights);
}

namespace {

at::Device resolve_device(const std::string& name) {
  if (name == "auto") return torch::cuda::is_available() ? at::Device(at::kCUDA) : at::kCPU;
  try {
    const at::Device device(name);
    if (device.is_cuda() && !torch::cuda::is_available()) {
      throw Error("--device", "'" + name + "' asked for, but this build has no usable CUDA");
    }
    return device;
  } catch (const c10::Error&) {
    throw Error("--device", "unknown device '" + name + "' (auto, cpu, cuda, cuda:N)");
  }
}

}  // namespace

std::string find_asset(const std::string& relative) {
  std::error_code error;
  if (fs::exists(relative, error)) return relative;
  fs::path dir = fs::read_symlink("/proc/self/exe", error).parent_path();
  for (int up = 0; up < 6 && !error && !dir.empty(); ++up) {
    const fs::path candidate = dir / relative;
    if (fs::exists(candidate, error)) return candidate.string();
    if (dir == dir.parent_path()) break;
    dir = dir.parent_path();
  }
  return "";
}

ModelSource make_model_source(const ModelSourceOptions& options) {
  ModelSource source;
  model::ModelConfig config = model_config_for(options, &source.config_file);
  // Checked before anything is built, naming the flag for the setting (Note [Play settings]).
  config.tokens = model::with_play_settings(config.tokens, options.play_settings, "play settings");
  const at::Device device = resolve_device(options.device);
  source.device = device.str();
  rollout::SessionOptions session_options;
  session_options.weights_seed = options.weights_seed;
  session_options.seed_frames = config.frames_per_block;
  session_options.cuda_graphs = options.cuda_graphs;
  const nlohmann::json settings =
      options.policy_settings.is_null() ? nlohmann::json::object() : options.policy_settings;
  const std::string policy = options.policy.empty() ? config.default_policy : options.policy;
  source.session = rollout::Session::create(config, options.weights, policy, settings, options.seed,
                                            device, session_options);
  source.summary = "model " + config.name + " (" + source.config_file + "), " +
                   (options.weights.empty()
                        ? "random weights (seed " + std::to_string(options.weights_seed) + ")"
                        : "weights " + options.weights) +
                   ", policy " + policy + ", " + source.device;
  return source;
}

std::vector<std::string> SessionControl::policy_names() const {
  return attention::policy_names();
}
std::string SessionControl::policy_name() const {
  return session_.policy_name();
}
nlohmann::json SessionControl::policy_settings() const {
  return session_.policy().settings();
}

PolicyGeometry SessionControl::geometry() const {
  const model::ModelConfig& config = session_.config();
  PolicyGeometry geometry;
  geometry.layers = config.layers;
  geometry.heads = config.heads;
  geometry.frames_per_block = config.frames_per_block;
  geometry.grid_h = session_.height() / config.patch_h;
  geometry.grid_w = session_.width() / config.patch_w;
  for (int t = 0; t < attention::kHeadTypeCount; ++t) {
    geometry.type_names.push_back(attention::head_type_name(static_cast<attention::HeadType>(t)));
  }
  if (config.tokens.active()) {
    for (const model::PlaySetting& s : model::play_settings()) {
      geometry.play.push_back({s.key, s.label, s.help, s.integer, s.slider_min, s.slider_max});
    }
  }
  return geometry;
}

PolicyRunStats SessionControl::run_stats() const {
  const rollout::SessionStats stats = session_.stats();
  PolicyRunStats run;
  run.model_ms = stats.model_ms;
  run.decode_ms = stats.decode_ms;
  run.blocks = stats.blocks;
  run.context_blocks = stats.context_blocks;
  run.switch_ms = stats.switch_ms;
  run.graph_replayed_blocks = stats.graph_replayed_blocks;
  run.graph_recordings = stats.graph_recordings;
  run.play = session_.play_settings();
  run.policy = stats.policy;
  return run;
}

void SessionControl::configure(const nlohmann::json& settings) {
  session_.configure_policy(settings);
}
void SessionControl::switch_policy(const std::string& name, const nlohmann::json& settings) {
  session_.switch_policy(name, settings);
}
void SessionControl::reclassify() {
  session_.reclassify_policy();
}
nlohmann::json SessionControl::play_settings() const {
  return session_.play_settings();
}
void SessionControl::configure_play(const nlohmann::json& settings) {
  session_.configure_play(settings);
}

}  // namespace wc::ui
