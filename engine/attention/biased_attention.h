// Attention with an additive per-key logit bias (TempCache's log-count) in ONE call for all heads
// of a store, on every device: the extra-dimension trick through the fused kernel, a broadcast
// float mask, or the float32 reference. See Note [TempCache bias].
#pragma once

#include <ATen/ATen.h>

#include <cstdint>

#include "engine/attention/tempcache/tempcache_settings.h"

namespace wc::attention {

// Note [TempCache bias]
// TempCache needs softmax(q·kᵀ/√D + b) v with one bias per key (log n for a history entry of n
// merged keys, 0 for the current block, a pad value for unused slots), different per head, with
// per-head entry counts that differ. Keys are stored padded to Dp = round_up(D + 2, 8) (128 -> 136,
// a head size the fused kernels take); the two extra key dims hold √D·b split into a store-dtype
// part and its remainder (hi = dtype(√D·b), lo = √D·b − hi, so bf16 carries b to ~2^-16 relative
// instead of 2^-8), the query gets 1 in both, values get 0, and the kernel runs with the scale
// fixed at 1/√D (not 1/√Dp): q'·k'/√D = q·k/√D + b exactly up to the rounding of lo. No Tq×Tk mask
// is ever materialised and the fused (flash / cuDNN) kernel runs unmodified.
// Padding slots cannot carry −inf through a dot product, so they get the finite kPadBias = −1e4
// (logit units) with zero keys and zero values. Their weight is exp(−1e4 − m) relative to the row
// maximum m ≥ the current block's largest logit; in float32 accumulation that underflows to exactly
// 0 unless |q·k|/√D approaches 1e4 (real attention logits are O(10)); the error bound is
// P·exp(−1e4 − m)/Z for P padding slots, and zero values mean they never add to the numerator.
// The same pad value is used on every path so all paths compute the same function.
// kMask passes the bias as a broadcast [B, H, 1, Tk] float mask in q's dtype on CUDA (bf16 rounds
// log n to 2^-8 relative) and adds it in float32 on the CPU (Note [Chunked CPU attention], as is
// kExtraDim there); kReference is the float32 matmul-softmax reference (tests); kAuto picks
// kExtraDim where a fused kernel exists (CUDA, LibTorch ≥ 2) and kMask elsewhere.
inline constexpr double kPadBias = -1.0e4;

// The padded head size Dp for head size D.
int64_t padded_head_dim(int64_t head_dim);

// The path kAuto resolves to for tensors on `device`.
BiasPath resolve_bias_path(BiasPath path, const at::Device& device);

// Writes the bias `bias` ([..., Tk] float32) into the extra dims of `keys` ([..., Tk, Dp]).
void write_bias_dims(at::Tensor& keys, const at::Tensor& bias, int64_t head_dim);

// q: [B, G, Tq, D]; keys / values: [B, G, Tk, Dp] whose extra key dims hold the bias (see
// write_bias_dims) and whose extra value dims are 0; bias: [B, G, Tk] float32 (used by kMask and
// kReference). Returns [B, G, Tq, D] in q's dtype.
at::Tensor biased_attention(const at::Tensor& q, const at::Tensor& keys, const at::Tensor& values,
                            const at::Tensor& bias, BiasPath path);

}  // namespace wc::attention
