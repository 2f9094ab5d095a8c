// The settings a training config gives each part of training (optimizer, noise, masked
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
