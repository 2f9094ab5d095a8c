// What the inference thread can ask of a frame source that runs an attention policy (the world
// model): live settings, policy switches, re-classification, the play settings and the policy's
// stats. The game has none. An interface, so the viewer's threading builds and is tested
// without LibTorch.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "engine/attention/policy_stats.h"

namespace wc::ui {

// One play setting as the panel shows it (Note [Play settings] in engine/model/play_settings.h).
struct PlaySlider {
  std::string key;  // its key in the play settings' JSON object
  std::string label;
  std::string help;
  bool integer = false;
  double min = 0.0, max = 1.0;
};

// The model's fixed shape, for the panel's head map and slider ranges.
struct PolicyGeometry {
  int layers = 0;
  int heads = 0;
  int frames_per_block = 1;
  int grid_h = 0;  // latent tokens per frame: grid_h x grid_w
  int grid_w = 0;
  // attention::head_type_name of each HeadType, by index (the viewer does not link the
  // policies, so their names travel with the geometry).
  std::vector<std::string> type_names;
  std::vector<PlaySlider> play;  // the model's play settings (none for a model without tokens)
};

// Per-stage times of the last generated block and the policy's own numbers.
struct PolicyRunStats {
  double model_ms = 0.0;   // all DiT forwards of the block
  double decode_ms = 0.0;  // decode to RGBA8
  int64_t blocks = 0;      // blocks generated since reset
  int64_t context_blocks = 0;
  double switch_ms = 0.0;  // the last policy switch's re-commit
  // Note [Block graph]: blocks of the current policy replayed from a CUDA graph, and recordings.
  int64_t graph_replayed_blocks = 0;
  int64_t graph_recordings = 0;
  nlohmann::json play = nlohmann::json::object();  // the play settings' values now
  attention::PolicyStats policy;
};

// Every call comes from the inference thread, between blocks.
class PolicyControl {
 public:
  virtual ~PolicyControl() = default;

  virtual std::vector<std::string> policy_names() const = 0;
  virtual std::string policy_name() const = 0;
  virtual nlohmann::json policy_settings() const = 0;
  virtual PolicyGeometry geometry() const = 0;
  virtual PolicyRunStats run_stats() const = 0;

  // Each throws wc::Error for an unknown policy or bad settings and leaves the game unchanged.
  virtual void configure(const nlohmann::json& settings) = 0;
  virtual void switch_policy(const std::string& name, const nlohmann::json& settings) = 0;
  virtual void reclassify() = 0;
  // Note [Play settings], live from the next block on: the values now (an empty object for a
  // model that has none), and some of them set. Throws wc::Error naming the key for a bad one
  // and leaves the game unchanged.
  virtual nlohmann::json play_settings() const = 0;
  virtual void configure_play(const nlohmann::json& settings) = 0;
};

}  // namespace wc::ui
