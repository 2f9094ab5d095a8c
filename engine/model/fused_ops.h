// The DiT's fused inference kernels at the tensor level (cuda/fused_norms.cu and cuBLASLt's GELU
// epilogue): one kernel where ops.h's composition makes several memory passes. They have no
// autograd, so they stand in only when autograd is not recording; ops.h stays the reference.
#pragma once

#include <ATen/ATen.h>

#include "engine/model/ops.h"

namespace wc::model {

// Whether the fused kernels can stand in for the composed ops on x: a CUDA build, x a floating
// tensor on a CUDA device, and autograd not recording (inference, evaluation).
bool fused_kernels_apply(const at::Tensor& x);

// modulate(layer_norm(x, eps), shift, scale) in one pass: x [B, F·N, D]; shift, scale [B, F, D].
at::Tensor fused_layer_norm_modulate(const at::Tensor& x, const at::Tensor& shift,
                                     const at::Tensor& scale, double eps);
// The attention input of q or k in one pass: y [B, T, heads·Dh] -> rms_norm(y, weight, eps),
// split into heads and rotated by `rotation`, returned contiguous [B, heads, T, Dh].
at::Tensor fused_qk_norm_rope(const at::Tensor& y, const at::Tensor& weight,
                              const RopeRotation& rotation, int heads, double eps);
// gelu_tanh(x · weightᵀ + bias) with the GELU in the matrix product's epilogue.
at::Tensor fused_linear_gelu(const at::Tensor& x, const at::Tensor& weight, const at::Tensor& bias);

// The dispatching forms the model calls: fused where fused_kernels_apply, else the composition.
at::Tensor layer_norm_modulate(const at::Tensor& x, const at::Tensor& shift,
                               const at::Tensor& scale, double eps);
at::Tensor qk_norm_rope(const at::Tensor& y, const at::Tensor& weight, const RopeRotation& rotation,
                        int heads, double eps);
at::Tensor linear_gelu(const at::Tensor& x, const at::Tensor& weight, const at::Tensor& bias);

}  // namespace wc::model
