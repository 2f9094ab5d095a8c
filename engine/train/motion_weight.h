// Per-pixel loss weights that stress where the world moved. See Note [Motion-weighted loss].
#pragma once

#include <ATen/ATen.h>
#include "engine/train/train_specs.h"

namespace wc::train {

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
