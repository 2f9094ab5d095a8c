// What the inference thread can ask of a frame source that runs an attention policy (the world
// model): live settings, policy switches, re-classification, the palette snap and the policy's
// stats. The game has none. An interface, so the viewer's threading builds and is tested without
// LibTorch.
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
  // Note [Palette snap]: whether the model's config has a palette, and whether blocks are
  // snapped to it now (the panel's checkbox shows only with a palette).
  bool has_palette = false;
  bool palette_snap = false;
  // Note [Patch snap], likewise for the config's patch book.
  bool has_patch_book = false;
  bool patch_snap = false;
  // Note [Choice temperature]: whether the model draws choices (Note [New ground]), and the
  // temperature it draws them at now (the panel's slider shows only when it draws).
  bool draws_choices = false;
  double choice_temperature = 1.0;
  // Note [Masked sampling]: whether the model is a token model (its choices are its tokens), its
  // unmasking passes per frame and the sureness shown in any pass, now.
  bool draws_tokens = false;
  int token_passes = 0;
  double token_sure = 1.0;
  // Note [Stay bias]: whether play takes each pixel's likeliest move, and the bias toward "as it
  // is" it takes it with now (the panel's slider shows only when it takes one).
  bool takes_likeliest_move = false;
  double stay_bias = 0.0;
  // Note [Remembered ground]: whether the model can remember the ground it leaves, whether it
  // does now, and how many cells of ground it holds (-1 while it does not remember).
  bool can_remember_ground = false;
  bool remember_ground = false;
  int64_t remembered_cells = -1;
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
  // Note [Palette snap], live, from the next block on. Throws wc::Error when turned on for a
  // model without a palette and leaves the game unchanged.
  virtual bool has_palette() const = 0;
  virtual bool palette_snap() const = 0;
  virtual void set_palette_snap(bool on) = 0;
  // Note [Patch snap], likewise (throws for a model without a patch book).
  virtual bool has_patch_book() const = 0;
  virtual bool patch_snap() const = 0;
  virtual void set_patch_snap(bool on) = 0;
  // Note [Choice temperature], live, from the next block on. Throws wc::Error for a model that
  // draws no choices or a bad temperature and leaves the game unchanged.
  virtual bool draws_choices() const = 0;
  virtual double choice_temperature() const = 0;
  virtual void set_choice_temperature(double temperature) = 0;
  // Note [Masked sampling], live, likewise: throws wc::Error for a pixel model or passes or a
  // sureness out of range and leaves the game unchanged.
  virtual bool draws_tokens() const = 0;
  virtual int token_passes() const = 0;
  virtual void set_token_passes(int passes) = 0;
  virtual double token_sure() const = 0;
  virtual void set_token_sure(double sure) = 0;
  // Note [Stay bias], live, likewise: throws wc::Error for a model that takes no likeliest move
  // or a bad bias and leaves the game unchanged.
  virtual bool takes_likeliest_move() const = 0;
  virtual double stay_bias() const = 0;
  virtual void set_stay_bias(double bias) = 0;
  // Note [Remembered ground], live, likewise: throws wc::Error when turned on for a model that
  // cannot remember and leaves the game unchanged; turned off, what was remembered is dropped.
  virtual bool can_remember_ground() const = 0;
  virtual bool remember_ground() const = 0;
  virtual void set_remember_ground(bool on) = 0;
};

}  // namespace wc::ui
