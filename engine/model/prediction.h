// What the DiT's output means: the velocity itself, or a correction to an estimate of the clean
// frame from the frame before the block (Note [Previous-frame skip]). Both the sampler and the
// trainer turn the output into the velocity here, so everything downstream sees velocities.
#pragma once

#include <ATen/ATen.h>

#include "engine/model/model_config.h"

namespace wc::model {

// Note [Previous-frame skip]
// Most of a frame of the game is the frame before it: still when idle (only the waves drift),
// shifted by one token when the camera scrolls (Note [One patch per step]). A plain velocity
// model must rebuild every pixel through attention and a residual stream no wider than a patch
// (the bundled model: 192 = 8·8·3), so each frame came out a slightly blurred copy of the last
// and the blur compounded. With the skip, the clean frame x0 is estimated first from what is
// known, the noisy frame x_t = (1 − t)·x0 + t·ε and the previous frame r, by the posterior mean
// under the prior x0 ~ N(r, s²) (s: `prediction.spread`):
//   a = 1 − t,  D = a²s² + t²,  k = a·s² / D,  x̂0 = r + k·(x_t − a·r) + c·out,  c = s·t / √D,
// where c, the posterior's standard deviation, scales the network's output `out` so that its
// target is of unit size at every level (the preconditioning of Karras et al.'s EDM, with the
// previous frame as the prior's mean). At t = 1 the estimate is r itself, at t → 0 it is x_t, and
// a zero output copies the previous frame exactly: the network only carries what changed. The
// velocity follows as v = (x_t − x̂0) / t, so the sampler, guidance (affine in the output) and the
// training loss stay as they were; the loss on v weighs the output's error by s / √D, between 1
// (t → 0) and s (t = 1), with no blow-up at small t. Every frame of a block takes the frame before
// the block as r: the block's own frames are denoised together, so none is known before another.

// The velocity of `output` ([B, F, C, H, W], the network's) for the noisy frames `x_t` at levels
// `t` ([B, F]) given `reference` (the frame before each frame's block, like x_t). Without the skip
// `output` is returned as it is (the other arguments may then be undefined). The arithmetic is
// float32; the result has `output`'s dtype.
at::Tensor velocity_from_output(const PredictionConfig& prediction, const at::Tensor& output,
                                const at::Tensor& x_t, const at::Tensor& t,
                                const at::Tensor& reference);

// The skip's reference for a block at play time: the last of the frames before it (`before`,
// [B, F', C, H, W]) repeated for each of the block's `frames_per_block` frames.
at::Tensor block_reference(const at::Tensor& before, int frames_per_block);

// The skip's reference for the noisy frames of a training clip: `frames` [B, F, ...] are the
// clip's clean frames, the noisy ones are frames fpb.. F − 1; each gets the clean frame before
// its block. Returns [B, F − fpb, ...].
at::Tensor previous_frame_reference(const at::Tensor& frames, int frames_per_block);

}  // namespace wc::model
