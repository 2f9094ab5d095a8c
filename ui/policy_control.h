// What the inference thread can ask of a frame source that runs an attention policy (the world
// model): live settings, policy switches, re-classification, a token model's sampling and the
// policy's stats. The game has none. An interface, so the viewer's threading builds and is tested
// without LibTorch.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "engine/attention/policy_stats.h"

namespace wc::ui {

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
  // Note [Masked sampling]: whether the model is a token model, the temperature it draws its
  // tokens at, its unmasking passes per frame and the sureness shown in any pass, now (the
  // panel's sliders show only for a token model).
  bool draws_tokens = false;
  double choice_temperature = 1.0;
  int token_passes = 0;
  double token_sure = 1.0;
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
  // Note [Masked sampling], live, from the next block on: a token model's temperature, passes
  // and sureness. Each setter throws wc::Error for a pixel model or a value out of range and
  // leaves the game unchanged.
  virtual bool draws_tokens() const = 0;
  virtual double choice_temperature() const = 0;
  virtual void set_choice_temperature(double temperature) = 0;
  virtual int token_passes() const = 0;
  virtual void set_token_passes(int passes) = 0;
  virtual double token_sure() const = 0;
  virtual void set_token_sure(double sure) = 0;
};

}  // namespace wc::ui
