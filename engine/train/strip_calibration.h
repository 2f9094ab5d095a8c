// Whether a token model invents ground as often as the game does where it has to invent it: its
// expected terrain mix on the strip each step brings into view, against the game's there.
#pragma once

#include <ATen/ATen.h>

#include <nlohmann/json.hpp>

#include "engine/model/codebook.h"

namespace wc::train {

// Note [Strip calibration]
// The strip a step brings into view is the only place where a walk's world is invented, and a
// world that empties (the model's non-grass share falling below the game's, frame after frame)
// does so there. Each masked place of that strip (outside the sprite and HUD) has the model's
// distribution over the codebook; summed against each entry's share of pixels per terrain group
// (Note [Terrain groups]) it is the mix the model expects to draw there, and the true tokens'
// shares the mix the game drew. On the game's own context, as in training, the two agree for a
// calibrated model: a model whose expected non-grass share is already below the game's here
// learnt too little of the world, and one that agrees here but empties in play loses its world
// to its own context (Note [Own token context]). The training log reports both, per window of
// steps, as "strip_non_grass" and "strip_water" ({"model": .., "game": .., "places": ..}).
class StripCalibration {
 public:
  StripCalibration(const model::Codebook& book, at::Device device);

  // Adds the places of `scored` ([B, M, N] bool) of `logits` ([B, M, N, V], any float dtype)
  // and their true `targets` ([B, M, N] int64). No autograd.
  void add(const at::Tensor& logits, const at::Tensor& targets, const at::Tensor& scored);
  // The window's figures (null shares when no place was added); then starts a new window.
  nlohmann::json take();

 private:
  at::Tensor shares_;     // [V, 2] float32: each entry's non-grass and water pixel shares
  at::Tensor model_sum_;  // [2] float32
  at::Tensor game_sum_;   // [2] float32
  at::Tensor places_;     // [] int64
};

}  // namespace wc::train
