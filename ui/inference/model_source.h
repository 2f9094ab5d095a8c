// The world model as the viewer's frame source: a Session built from `worldcast play` options
// (weights folder, config, policy, device), and its PolicyControl for the inference thread.
#pragma once

#include <cstdint>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "engine/rollout/session.h"
#include "ui/inference/policy_control.h"

namespace wc::ui {

// Where the bundled trained model lives, and the config used without weights. The bundled model
// is the token world model game-tokens; the config without weights is a small pixel model.
inline constexpr const char* kBundledModelDir = "assets/models/game-tokens";
inline constexpr const char* kDefaultModelConfig = "assets/configs/game-small.json";

struct ModelSourceOptions {
  std::string weights;  // a checkpoint folder (or .safetensors file); "" = random weights
  // "" = WEIGHTS/config.json, else the config stored in the checkpoint's metadata, else (no
  // weights) kDefaultModelConfig.
  std::string config;
  std::string policy;  // empty: the model config's default_policy
  nlohmann::json policy_settings = nlohmann::json::object();
  std::string device = "auto";  // auto (CUDA when available), cpu, cuda, cuda:N
  uint64_t seed = 1;
  uint64_t weights_seed = 0;
  bool cuda_graphs = true;  // SessionOptions::cuda_graphs
  // Note [Play settings]: some keys over the model config's (worldcast play's --play-settings
  // and the flags of each setting).
  nlohmann::json play_settings = nlohmann::json::object();
};

struct ModelSource {
  std::unique_ptr<rollout::Session> session;
  std::string config_file;  // the config's file, or "checkpoint metadata"
  std::string device;
  std::string summary;  // one line for the log: what was loaded from where
};

// Throws wc::Error naming the file and field for a missing or bad config or checkpoint, an
// unknown policy or bad settings.
ModelSource make_model_source(const ModelSourceOptions& options);

// The config make_model_source plays `options` with: --config when given, else the config.json
// in a weights folder, else the checkpoint's metadata config, else the bundled default. `file`
// names where it came from. Throws wc::Error naming the file and field.
model::ModelConfig model_config_for(const ModelSourceOptions& options, std::string* file);

// `relative` (e.g. "assets/models/game-tokens") under the working directory, else under the
// folders above the running executable (a build tree inside the repository); "" if neither.
std::string find_asset(const std::string& relative);

// A PolicyControl over a Session (called on the inference thread only).
class SessionControl final : public PolicyControl {
 public:
  explicit SessionControl(rollout::Session& session) : session_(session) {}

  std::vector<std::string> policy_names() const override;
  std::string policy_name() const override;
  nlohmann::json policy_settings() const override;
  PolicyGeometry geometry() const override;
  PolicyRunStats run_stats() const override;
  void configure(const nlohmann::json& settings) override;
  void switch_policy(const std::string& name, const nlohmann::json& settings) override;
  void reclassify() override;
  nlohmann::json play_settings() const override;
  void configure_play(const nlohmann::json& settings) override;

 private:
  rollout::Session& session_;
};

}  // namespace wc::ui
