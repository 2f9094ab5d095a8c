// Scaled dot-product attention that works on LibTorch 1.13 (CPU, Debian) and 2.x (CUDA):
// the fused kernels (cuDNN / FlashAttention through at::scaled_dot_product_attention) where they
// exist, the float32 reference elsewhere. See DESIGN.md §12.
#pragma once

#include <ATen/ATen.h>

#include <optional>

namespace wc::attention {

// softmax(q kᵀ · scale + bias) v over [..., Tq, D] x [..., Tk, D]; scale defaults to 1/sqrt(D).
// `key_bias`, if given, is an additive logit bias per key, broadcastable to [..., 1, Tk]
// (TempCache's log-count); `mask`, if given, is a boolean [.., Tq, Tk] (true = may attend).
// Computed in float32 (via matmul + softmax) and returned in q's dtype.
at::Tensor reference_attention(const at::Tensor& q, const at::Tensor& k, const at::Tensor& v,
                               const std::optional<at::Tensor>& mask = std::nullopt,
                               const std::optional<at::Tensor>& key_bias = std::nullopt,
                               std::optional<double> scale = std::nullopt);

// Note [Chunked CPU attention]
// On the CPU the reference materialises the whole [..., Tq, Tk] logit tensor, a fresh allocation
// of Tq·Tk floats per head that the allocator takes from the kernel as new pages on every call:
// a token frame of 256 queries against a 32-frame window is 69 MB per layer and pass, and
// faulting in, zeroing, writing and re-reading that memory costs ten times the arithmetic. The
// chunked path computes the same float32 function a slab of query rows at a time, into one
// logit buffer of at most kChunkLogits floats reused for every slab (it stays in the cache and
// its pages are touched once per call): logits by a batched matrix product, the key bias added,
// the softmax in place, the slab's output by a second product written straight into the result.
// Rows are independent in softmax attention, so any slab size gives the reference's value.
inline constexpr int64_t kChunkLogits = int64_t{1} << 21;

// softmax(q kᵀ · scale + key_bias) v in float32, by slabs of query rows (Note [Chunked CPU
// attention]); the same shapes and result as reference_attention without a mask. q, k and v share
// their leading dims (or broadcast them); returned in q's dtype. Where autograd records (an input
// requires grad), it is the reference itself: its slabs are written into buffers.
at::Tensor chunked_attention(const at::Tensor& q, const at::Tensor& k, const at::Tensor& v,
                             const std::optional<at::Tensor>& key_bias = std::nullopt,
                             std::optional<double> scale = std::nullopt);

// Unmasked attention over [B, H, T, D] tensors: the fastest available kernel for the device and
// LibTorch version (fused SDPA on CUDA with LibTorch >= 2; chunked_attention elsewhere).
at::Tensor attention(const at::Tensor& q, const at::Tensor& k, const at::Tensor& v);

// Attention under a boolean mask ([Tq, Tk] or broadcastable; true = may attend): fused SDPA on
// CUDA with LibTorch >= 2, the reference otherwise.
at::Tensor masked_attention(const at::Tensor& q, const at::Tensor& k, const at::Tensor& v,
                            const at::Tensor& mask);

// True when attention() uses a fused kernel for tensors on `device`.
bool fused_attention_available(const at::Device& device);

}  // namespace wc::attention
