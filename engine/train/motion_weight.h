// Per-pixel loss weights that stress where the world moved. See Note [Motion-weighted loss].
#pragma once

#include <ATen/ATen.h>

namespace wc::train {

struct LossSpec {
  // Extra weight of a pixel that changed between a noisy frame and the clip frame before it:
  // weight 1 + motion_weight there, 1 elsewhere; 0 = the plain mean squared error.
  double motion_weight = 0.0;
  // A pixel changed when some channel moved by more than this (frames are in [−1, 1]).
  double motion_threshold = 0.04;
  // Note [Reference loss]
  // With a moved reference (Note [Moved reference]) the network both chooses the reference and
  // corrects it, and the velocity loss does not care which does the work: trained on it alone,
  // the correction (already trained in the model it started from) took the moves and the choice
  // stayed where it started, "as it is" (85% everywhere, under every key, after 1 175 steps), so
  // moves came out as blurred redraws. This weight adds the squared error of the chosen
  // reference itself against the clean frame, so the choice learns to pick, per pixel, the move
  // that explains the frame, and the correction is left what no move explains. 0 = off.
  double reference_weight = 0.0;
  // Note [Straight-through moves] (prediction.h): the velocity loss sees the sharpest choice, as
  // play does, with the mix's gradient. Needs a moved reference.
  bool straight_through_moves = false;
  // Note [Consistent target] (consistent_target.h): clips with the model's own history reach for
  // its own previous frame moved as the game moved ("own_target": "consistent"), not the game's
  // frame ("truth"). Needs a moved reference, one frame per block and own-history clips.
  bool consistent_target = false;
  // Note [Uncovered pixels] (consistent_target.h), with the consistent target ("own_target":
  // "consistent_uncovered"): pixels the overlays uncovered during the run reach for the game's
  // frame.
  bool uncovered_from_game = false;
  // Note [Choice likelihood] (choice_likelihood.h): the weight of the choice's negative
  // log-likelihood; above 0 the velocity loss sees the likeliest choice with no gradient into the
  // logits. Needs a moved reference; excludes straight_through_moves. 0 = off.
  double choice_weight = 0.0;
  // Note [Overlay repair] (overlay_damage.h): extra weight of a pixel inside the sprite and HUD,
  // in the velocity and reference losses: 1 + overlay_weight there. The sprite is 1.6% of a
  // frame, so its edge's moves and its repair hardly move a plain mean. 0 = off.
  double overlay_weight = 0.0;
};

// [B, F − fpb, 1, H, W] float32 weights for the noisy frames (fpb..F−1) of a clip batch's true
// frames [B, F, C, H, W] with their absolute positions [B, F], computed where `frames` are (the
// trainer passes its device copy: on 2 CPU cores a batch of 32 clips takes 0.4 s). A frame whose
// predecessor is not the frame just before it in the game (the sink before a walked-away run:
// Note [Clip positions]) gets weight 1 everywhere.
at::Tensor motion_weights(const at::Tensor& frames, const at::Tensor& positions,
                          int frames_per_block, const LossSpec& loss);

// mean(weight · (prediction − target)²) / mean(weight): the squared error as a weighted mean over
// pixels, on the plain loss's scale; `weight` broadcasts over channels. Undefined weight = plain.
at::Tensor weighted_squared_error(const at::Tensor& prediction, const at::Tensor& target,
                                  const at::Tensor& weight);

}  // namespace wc::train
