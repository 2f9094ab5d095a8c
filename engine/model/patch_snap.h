// Snapping each square patch of a generated frame to the nearest patch of the training frames
// (Note [Patch snap]).
#pragma once

#include <ATen/ATen.h>

#include "engine/model/patch_book.h"

namespace wc::model {

// Note [Patch snap]
// The palette snap (Note [Palette snap]) keeps every pixel one of the game's colours, but not
// every arrangement of them is one the game draws. Over thousands of frames the model's errors
// that survive the palette snap gather where nothing pulls them back: grass creeps pixel by pixel
// into the player sprite, whose damaged pixels then flicker at rest (all of the idle change after
// 10 000 frames lay in the 24×24 pixels around the sprite), and copies of the sprite
// are left in the world. The patch snap is the palette snap one level up, as a VQ decoder's
// codebook of patches: each size × size patch of the frame's grid (the game's camera and the
// model's moves go in 8-pixel steps, so the world's patches stay on that grid) is replaced by its
// nearest patch of the book, surveyed from the training frames (`worldcast patches`), when the two
// differ in at most `max_changed` pixels. A patch farther from everything in the book (new ground
// the survey never saw) is left as drawn, so the snap repairs near misses and invents nothing.
// Patches the survey saw only in screen-fixed cells (the sprite and the HUD, found from the data
// as cells whose patches appear nowhere else) are bound to those cells: a damaged sprite snaps
// back to a sprite, while a stray copy of the sprite out in the world has no sprite patch to snap
// to there. A screen-fixed cell (one that some patch is bound to) has its own limit,
// `fixed_max_changed`: the game draws one of that cell's own patches there in every frame, so
// the snap may take the nearest of them however far the drawn patch has strayed (with the
// world's limit of 8 pixels, the sprite still decayed past repair within 1 000 frames and
// held 99 % of the idle change at the end). There the drawn sprite often lies between two of the
// cell's patches (the sprite over two grounds, two poses), and the nearest one changed from frame
// to frame with the noise: a few pixels of the sprite flickered at rest, the whole of the idle
// change after 10 000 frames on the H200. So a screen-fixed cell holds the previous
// frame's patch (the block's reference) while it explains the drawn patch within `fixed_hold`
// pixels of the nearest book patch; a real change of pose or facing moves more pixels than that.
// One pixel is enough, and more costs the keys: the network reads the sprite's stride as motion,
// and holding the standing pose against strides drawn 4 pixels off it took the scroll's share of
// moving steps from 93 % to 90 % (CPU, 8 seeds).
// A world cell, likewise, holds the previous frame's patch against a drawn patch that is no book
// patch and differs from it in at most `hold` pixels: on one seed of five the last idle frames
// still gained single stray pixels there. A drawn patch that is a book patch is always taken, so
// a dot of the game's ground scrolling from cell to cell still moves.
// Snapped frames are committed and become the next frame's reference, so a repair holds; play snaps
// after the palette snap (the book's patches are palette colours).

class PatchSnap {
 public:
  // The book's patches in the palette's colours (`palette`: palette_tensor's [C, 3], model space),
  // on `device`. Throws wc::Error naming `where` when the book's colours exceed the palette's.
  PatchSnap(const PatchBook& book, const at::Tensor& palette, const PatchSnapLimits& limits,
            const at::Device& device, const std::string& where);

  // `frames` ([..., 3, H, W] of the book's frame size, any floating dtype, model space) with each
  // patch of the grid replaced by its nearest allowed book patch (Euclidean distance of the RGB
  // bytes, ties to the first in the book) when they differ in at most max_changed pixels
  // (fixed_max_changed in a screen-fixed cell). With `reference` (frames' shape: the frame before
  // each, as the sampler's), a screen-fixed cell keeps the reference's patch when it differs from
  // the drawn one in at most fixed_hold (> 0) more pixels than the nearest book patch does, and a
  // world cell keeps it when the drawn patch is no book patch and differs from it in at most hold
  // pixels. Returns `frames`' dtype. Throws wc::Error for another frame size.
  at::Tensor snap(const at::Tensor& frames, const at::Tensor& reference = at::Tensor()) const;

  int size() const { return size_; }
  const PatchSnapLimits& limits() const { return limits_; }
  int64_t patches() const { return entry_bytes_.size(0); }

 private:
  int size_, grid_h_, grid_w_;
  PatchSnapLimits limits_;
  std::string where_;
  at::Tensor entry_bytes_;  // [K, 3·S·S] float32, byte values minus 128 (exact products)
  at::Tensor entry_norms_;  // [K] their squared norms
  at::Tensor entry_model_;  // [K, 3·S·S] the same patches in model space
  at::Tensor barred_;       // [cells, K] float32: 0 where the patch may stand, kBarred elsewhere
  at::Tensor limit_;        // [cells] int64: the most pixels a snap may change there
  at::Tensor fixed_;        // [cells] bool: screen-fixed (a patch is bound there)
};

// The per-patch loop that PatchSnap::snap must match (tests; CPU).
at::Tensor snap_patches_reference(const at::Tensor& frames, const PatchBook& book,
                                  const at::Tensor& palette, const PatchSnapLimits& limits,
                                  const at::Tensor& reference = at::Tensor());

}  // namespace wc::model
