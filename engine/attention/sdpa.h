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

// Unmasked attention over [B, H, T, D] tensors: the fastest available kernel for the device and
// LibTorch version (fused SDPA on CUDA with LibTorch >= 2; the reference otherwise).
at::Tensor attention(const at::Tensor& q, const at::Tensor& k, const at::Tensor& v);

// Attention under a boolean mask ([Tq, Tk] or broadcastable; true = may attend): fused SDPA on
// CUDA with LibTorch >= 2, the reference otherwise.
at::Tensor masked_attention(const at::Tensor& q, const at::Tensor& k, const at::Tensor& v,
                            const at::Tensor& mask);

// True when attention() uses a fused kernel for tensors on `device`.
bool fused_attention_available(const at::Device& device);

}  // namespace wc::attention
