// One training step's model input: a clean context stream and a noisy stream of the same clip in
// one sequence, so every noisy frame is denoised against clean history exactly as at play time.
// See Note [Two-stream teacher forcing].
#pragma once

#include <ATen/ATen.h>

#include <cstdint>
#include <vector>

#include "engine/model/dit.h"
#include "engine/train/clip_stream.h"
#include "engine/train/train_specs.h"

namespace wc::train {

struct TeacherForcingBatch {
  model::FrameBatch input;  // [B, F + F − fpb, ...] context frames, then the noisy frames
                            // (attend with two_stream_mask: the same for every batch)
  at::Tensor target;        // [B, F − fpb, C, H, W] velocity ε − x0 of the noisy frames
  at::Tensor clean;         // [B, F, C, H, W] the clip's true frames x0, on the device
  int noisy_first = 0;      // index of the first noisy frame in the sequence
  // What the context stream was made of: history [B, F, C, H, W] (the true frames, or the
  // model's own predictions: Note [Own context]), re-noised as (1 − c)·history + c·ε.
  at::Tensor history;
  at::Tensor context_level;  // [B, F, 1, 1, 1] c
  at::Tensor context_eps;    // like history
  at::Tensor own_context;    // [B] bool: the clips drawn for Note [Own context]
};

// The attention mask for `frames` clip frames of `tokens_per_frame` tokens (blocks of
// `frames_per_block`): context frames are block-causal among themselves; the noisy frame of block
// b sees the context of blocks < b and the noisy frames of its own block.
at::Tensor two_stream_mask(int frames, int tokens_per_frame, int frames_per_block);

// The context stream of `history` ([B, F, ...]) at levels `level` ([B, F, 1, 1, 1]) with noise
// `eps`: (1 − c)·history + c·ε, as the clean pass commits a frame at play time.
at::Tensor renoise(const at::Tensor& history, const at::Tensor& level, const at::Tensor& eps);

// Note [Own context]
// At play time the history is the model's own frames, and with the previous-frame skip
// (Note [Previous-frame skip]) its last frame is also the starting point of the next. Trained
// only on true history, the model never learns to correct an error in it, and the first
// rollouts of the skip showed what follows: a frame 34 dB from the truth, then a loss of about
// 1.2 dB a frame, as each frame sharpened its predecessor's small errors into colourful noise.
// So in a share of the clips the history is replaced by the model's own predictions x̂0 = x_t − t·v
// of the clip's frames from a first, gradient-free pass over the same batch (the sink, real at
// play time too, stays real), and the model is trained to reach the true frame from that
// history. The errors are one-step errors, not a rollout's accumulated ones, but they are the
// model's own, and the loss now pays for passing them on.

// The batch with the history of the clips where `own` ([B] bool) is true replaced by
// `predicted` ([B, F − fpb, C, H, W]: the model's x̂0 of the noisy frames, which are frames
// fpb.. of the clip): the context stream is rebuilt from it with the batch's context noise.
void use_own_context(TeacherForcingBatch& batch, const at::Tensor& predicted, const at::Tensor& own,
                     int frames_per_block);

// The batch with `history` ([B, F, C, H, W]) as its history: the context stream is rebuilt from
// it with the batch's context noise.
void use_history(TeacherForcingBatch& batch, const at::Tensor& history);

// Levels, actions and noise all follow from `seed` (the step's seed): a resumed run repeats the
// steps it would have taken. Tensors are float32 on `device`; mixed precision is the caller's.
TeacherForcingBatch make_teacher_forcing_batch(const ClipBatch& clips, const NoiseSpec& noise,
                                               int tokens_per_frame, int frames_per_block,
                                               uint64_t seed, at::Device device);

}  // namespace wc::train
