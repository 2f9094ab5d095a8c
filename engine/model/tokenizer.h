// Frames to codebook tokens and back, on any device. See Note [Patch tokens].
#pragma once

#include <ATen/ATen.h>

#include "engine/model/codebook.h"

namespace wc::model {

// Note [Patch tokens]
// The reference game draws 16x16 tiles of flat colours and its camera moves exactly one 8x8
// patch per step, so every 8x8 patch on screen is a quarter of a tile (or the sprite or HUD over
// one): a table of the patches the game draws is a lossless tokenizer, and a model that predicts
// a categorical distribution per patch can draw new ground (a tree, a shore) instead of the mean
// of what could be there. Encoding is the nearest entry in RGB bytes: the distance is computed
// in float32 on byte values (0..255), where every product and every sum of a patch's 8·8·3
// terms is an integer below 2^24, so it is exact and an entry of the table encodes to itself.
// A patch the table lacks goes to its nearest entry and is counted as a miss.
class Tokenizer {
 public:
  // The table on `device`; patch side from the book.
  Tokenizer(const Codebook& book, at::Device device);

  int patch() const { return patch_; }
  int64_t vocab() const { return entries_.size(0); }

  // frames [B, F, 3, H, W] in [-1, 1] (any floating dtype; H, W multiples of the patch) ->
  // tokens [B, F, H/p, W/p] int64. `misses` (optional) receives the count of patches that are no
  // entry exactly, as a 0-dim int64 tensor on the frames' device (no host sync).
  at::Tensor encode(const at::Tensor& frames, at::Tensor* misses = nullptr) const;
  // tokens [B, F, h, w] (int64, each in [0, vocab)) -> frames [B, F, 3, h·p, w·p] in [-1, 1],
  // `dtype`: a gather from the table, no arithmetic on the pixels beyond the byte scaling.
  at::Tensor decode(const at::Tensor& tokens, at::ScalarType dtype) const;

 private:
  int patch_;
  at::Tensor entries_;  // [V, 3·p·p] float32 byte values, channel-major like patchify
  at::Tensor norms_;    // [V] float32 squared norms of the entries
  at::Tensor unit_;     // [V, 3·p·p] float32 entries as frame values byte / 127.5 − 1
};

}  // namespace wc::model
