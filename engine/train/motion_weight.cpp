// See motion_weight.h.
#include "engine/train/motion_weight.h"

namespace wc::train {

// Note [Motion-weighted loss]
// Where a frame is mostly its predecessor moved by less than a token (as when a key press scrolled
// the game's camera by 2 pixels, a quarter of an 8×8 patch; a step is now a whole patch: Note [One
// patch per step]), copying the predecessor is the cheapest way to a low loss: the pixels that
// betray the copy (edges that moved, the player's animation, the strip that scrolled in) are a
// small share of the frame, and a model trained on 2-pixel steps still copied after 5 500 steps
// (the model card's probe). Weighting the pixels that changed between
// consecutive true frames makes those few pixels carry the loss in proportion to what the model
// must learn from them. The weights are normalised (a weighted mean), so the learning rate keeps
// its meaning, and only frames with a true predecessor are weighted.
at::Tensor motion_weights(const at::Tensor& frames, const at::Tensor& positions,
                          int frames_per_block, const LossSpec& loss) {
  const int64_t f = frames.size(1);
  const at::Tensor current = frames.slice(1, frames_per_block);
  const at::Tensor previous = frames.slice(1, frames_per_block - 1, f - 1);
  const at::Tensor moved =
      std::get<0>((current - previous).abs().max(2, /*keepdim=*/true)) > loss.motion_threshold;
  const at::Tensor p = positions.to(frames.device(), at::kLong);
  const at::Tensor consecutive =
      (p.slice(1, frames_per_block) - p.slice(1, frames_per_block - 1, f - 1)) == 1;
  const at::Tensor weighted =
      moved & consecutive.view({frames.size(0), f - frames_per_block, 1, 1, 1});
  return 1.0 + loss.motion_weight * weighted.to(at::kFloat);
}

at::Tensor weighted_squared_error(const at::Tensor& prediction, const at::Tensor& target,
                                  const at::Tensor& weight) {
  const at::Tensor squared = (prediction - target).pow(2);
  if (!weight.defined()) return squared.mean();
  return (squared * weight).mean() / weight.mean();
}

}  // namespace wc::train
