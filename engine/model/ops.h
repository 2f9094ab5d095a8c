// The DiT's stateless tensor operations (ATen only): norms, adaLN modulation, the timestep
// embedding, 3D RoPE, patch (un)embedding reshapes and the block-causal training mask.
#pragma once

#include <ATen/ATen.h>

#include <cstdint>

namespace wc::model {

// x · rsqrt(mean(x², -1) + eps) · weight, computed in float32, returned in x's dtype.
at::Tensor rms_norm(const at::Tensor& x, const at::Tensor& weight, double eps);

// LayerNorm over the last dimension without affine parameters (adaLN supplies them).
at::Tensor layer_norm(const at::Tensor& x, double eps);

// adaLN per frame: x is [B, F·N, D] tokens of F frames, shift and scale are [B, F, D];
// returns x · (1 + scale) + shift with each frame's vectors applied to its N tokens.
at::Tensor modulate(const at::Tensor& x, const at::Tensor& shift, const at::Tensor& scale);
// x + gate · y per frame (gate [B, F, D]; x, y [B, F·N, D]).
at::Tensor gated_residual(const at::Tensor& x, const at::Tensor& y, const at::Tensor& gate);

// Sinusoidal embedding of noise levels t ∈ [0, 1] (scaled to [0, 1000] as in Wan):
// [..., dim] = cat(cos(1000·t·ω_i), sin(1000·t·ω_i)), ω_i = 10000^(−i/(dim/2)). float32.
at::Tensor timestep_embedding(const at::Tensor& t, int dim);

// See Note [3D RoPE].
struct RopeTable {
  at::Tensor cos;  // [T, head_dim / 2]
  at::Tensor sin;
};
// How the head_dim/2 rotation pairs are split over (time, row, column), Wan's split:
// rows and columns get head_dim/6 pairs each (rounded down), time gets the rest.
struct RopeSplit {
  int time = 0;
  int row = 0;
  int column = 0;
};
RopeSplit rope_split(int head_dim);
// The table for `frames` frames of a grid_h x grid_w grid starting at absolute frame index
// `frame_start` (token order: frame, row, column). Angles are computed in double precision so
// large frame indices stay exact; the table is float32 on the CPU (move it where needed).
RopeTable rope_table(int64_t frame_start, int frames, int grid_h, int grid_w, int head_dim,
                     double theta);
// The same for explicit absolute frame positions: [F] gives [T, head_dim / 2] tables; [B, F]
// (one position list per batch element, as training clips with their own offsets need) gives
// [B, 1, T, head_dim / 2] tables that broadcast over heads.
RopeTable rope_table_at(const at::Tensor& frame_positions, int grid_h, int grid_w, int head_dim,
                        double theta);
// Rotates adjacent pairs (x[2i], x[2i+1]) of the last dimension of x ([B, H, T, D]). The
// straightforward form: the reference of apply_rotation.
at::Tensor apply_rope(const at::Tensor& x, const RopeTable& table);

// A RopeTable laid out for apply_rotation, in one dtype and on one device: each pair's cos
// twice, and (−sin, +sin), both [..., T, head_dim].
struct RopeRotation {
  at::Tensor cos;
  at::Tensor sin_signed;
};
RopeRotation rope_rotation(const RopeTable& table, at::Device device, at::ScalarType dtype);
// apply_rope as x·cos + swap_pairs(x)·sin_signed: 6 tensor calls instead of 13 per q or k (the
// model is launch-bound on a GPU), and bit-identical to apply_rope, because a·cos − b·sin and
// a·cos + b·(−sin) round the same way (negation is exact) and addition commutes.
at::Tensor apply_rotation(const at::Tensor& x, const RopeRotation& rotation);

// [B, F, C, H, W] -> [B, F·(H/ph)·(W/pw), C·ph·pw] (token order frame, row, column).
at::Tensor patchify(const at::Tensor& frames, int patch_h, int patch_w);
// The inverse of patchify for `frames` frames of grid_h x grid_w tokens with C channels.
at::Tensor unpatchify(const at::Tensor& tokens, int frames, int grid_h, int grid_w, int channels,
                      int patch_h, int patch_w);

// [T, T] boolean (true = may attend) for `frames` frames of `tokens_per_frame` tokens in blocks of
// `frames_per_block` frames: bidirectional inside a block, causal across blocks.
at::Tensor block_causal_mask(int frames, int tokens_per_frame, int frames_per_block);

}  // namespace wc::model
