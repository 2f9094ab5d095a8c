// The settings a training config gives each part of training (optimizer, loss, noise, masked
// tokens), apart from the code that uses them, so the config's reader needs no LibTorch.
#pragma once

#include <cstdint>
#include <vector>

namespace wc::train {

struct AdamWSettings {
  double beta1 = 0.9;
  double beta2 = 0.99;
  double eps = 1e-8;
  double weight_decay = 0.01;  // decoupled; applied to matrices only (see AdamW)
};

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

struct NoiseSpec {
  // Diffusion forcing: every noisy frame draws its own level. This share of them is taken from
  // the sampler's levels (what the few-step sampler will ask for), the rest uniform in [0, 1].
  double schedule_share = 0.5;
  std::vector<double> schedule_levels = {1.0, 0.5};
  // Context-noise augmentation: this share of clips gets context frames re-noised to a level
  // uniform in [0, max_context_noise], so the model tolerates its own imperfect history.
  double context_noise_share = 0.5;
  double max_context_noise = 0.1;
  // Action dropout: each frame's action is replaced by `dropped_action` with this probability.
  double action_dropout = 0.1;
  int64_t dropped_action = 5;
  // Note [Own context]: this share of clips sees, as history, the model's own teacher-forced
  // predictions of its frames instead of the true frames (0 = off).
  double own_context_share = 0.0;
  // Where that history comes from: one-step predictions from true frames (Note [Own context]),
  // or a rollout of the clip by the model (Note [Own rollout] in own_rollout.h).
  bool own_context_rollout = false;
  // Note [Overlay repair] (overlay_damage.h): this share of clips has its history's sprite and
  // HUD damaged as play damages them (0 = off). Needs a moved reference.
  double overlay_damage_share = 0.0;
};

// What Note [Masked training] (token_batch.h) masks, weighs and corrupts.
struct TokenSpec {
  int noisy_frames = 8;
  double new_ground_weight = 3.0;
  double overlay_weight = 1.0;
  double corrupt_share = 0.5;
  double max_corrupt = 0.1;
  // The share of clips whose sprite and HUD cells are corrupted from a random frame on (Note
  // [Overlay corruption], token_batch.h); 0: none.
  double overlay_corrupt_share = 0.0;
  // The share of each batch's clips whose context the model plays itself (Note [Own token
  // context], token_rollout.h); 0: every context is the game's.
  double own_share = 0.0;
  // The share of each batch's clips whose context frames carry the model's own one-step draws
  // (Note [Drawn context], drawn_context.h), drawn at drawn_temperature; 0: none.
  double drawn_share = 0.0;
  double drawn_temperature = 1.0;
  // The share of masked frames given their own tile quarters (Note [Drawn quarters],
  // token_batch.h); 0: none, as a model without "drawn_quarters" plays.
  double drawn_quarters_share = 0.0;
};

}  // namespace wc::train
