// One training step's model input: a clean context stream and a noisy stream of the same clip in
// one sequence, so every noisy frame is denoised against clean history exactly as at play time.
// See Note [Two-stream teacher forcing].
#pragma once

#include <ATen/ATen.h>

#include <cstdint>
#include <vector>

#include "engine/model/dit.h"
#include "engine/train/clip_stream.h"

namespace wc::train {

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
};

struct TeacherForcingBatch {
  model::FrameBatch input;  // [B, F + F − fpb, ...] context frames, then the noisy frames
                            // (attend with two_stream_mask: the same for every batch)
  at::Tensor target;        // [B, F − fpb, C, H, W] velocity ε − x0 of the noisy frames
  at::Tensor clean;         // [B, F, C, H, W] the clip's true frames x0, on the device
  int noisy_first = 0;      // index of the first noisy frame in the sequence
};

// The attention mask for `frames` clip frames of `tokens_per_frame` tokens (blocks of
// `frames_per_block`): context frames are block-causal among themselves; the noisy frame of block
// b sees the context of blocks < b and the noisy frames of its own block.
at::Tensor two_stream_mask(int frames, int tokens_per_frame, int frames_per_block);

// Levels, actions and noise all follow from `seed` (the step's seed): a resumed run repeats the
// steps it would have taken. Tensors are float32 on `device`; mixed precision is the caller's.
TeacherForcingBatch make_teacher_forcing_batch(const ClipBatch& clips, const NoiseSpec& noise,
                                               int tokens_per_frame, int frames_per_block,
                                               uint64_t seed, at::Device device);

}  // namespace wc::train
