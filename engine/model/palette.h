// Snapping generated frames to the colours of the training data (Note [Palette snap]).
#pragma once

#include <ATen/ATen.h>

#include <string>

#include "engine/model/model_config.h"

namespace wc::model {

// Note [Palette snap]
// The reference game draws every pixel from a few flat colours, and so does every frame the model
// trained on. The network's correction (Note [Previous-frame skip]) is never exactly zero: where
// the world stands still it adds a little each frame, the next frame copies that and adds more,
// and standing still for 64 frames ended in speckle at 11 dB against the game (the bundled model
// without the snap). Snapping each generated frame to its nearest colour of the training data's
// palette, as a vector-quantised decoder does with its codebook, rounds away every error smaller
// than half the gap between two colours before the next frame can copy it; only a pixel that the
// network really changes changes. The palette is surveyed from the training frames (`worldcast
// palette`), not taken from the game's code, and stored in the model's config; `palette.snap:
// false` (or `--palette-snap off`) plays without it, so the model's own numbers stay measurable.
// Play snaps the clean block before it is committed and becomes the next block's reference;
// training's own rollout snaps the frames it plays, as play does.

// A command line's `--palette-snap` (`flag`) over the config: "config" keeps the config's choice,
// "off" plays without the snap, "on" snaps (throws wc::Error naming the flag and the config's
// file when the config has no palette).
void apply_palette_snap(ModelConfig& config, const std::string& choice, const std::string& flag);

// The palette's colours in model space ([K, 3] float32 on `device`, [-1, 1] like the frames).
at::Tensor palette_tensor(const PaletteConfig& palette, const at::Device& device);

// `frames` ([..., 3, H, W], any floating dtype) with each pixel replaced by its nearest colour of
// `colours` (palette_tensor's) in Euclidean RGB distance, ties to the first colour. Returns
// `frames`' dtype.
at::Tensor snap_to_palette(const at::Tensor& frames, const at::Tensor& colours);

// The per-pixel loop that snap_to_palette must match (tests; float32, CPU).
at::Tensor snap_to_palette_reference(const at::Tensor& frames, const at::Tensor& colours);

}  // namespace wc::model
