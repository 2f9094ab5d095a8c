// See fused_ops.h. Without WORLDCAST_HAS_CUDA the fused forms are never chosen and throw if called.
#include "engine/model/fused_ops.h"

#include <c10/core/GradMode.h>
#include <torch/version.h>

#include <vector>

#ifdef WORLDCAST_HAS_CUDA
#include <ATen/cuda/CUDAContext.h>
#include <c10/cuda/CUDAGuard.h>

#include "engine/model/cuda/fused_norms.h"
#endif

namespace wc::model {
namespace {

#ifdef WORLDCAST_HAS_CUDA
cuda::ElementType element_type(const at::Tensor& x) {
  switch (x.scalar_type()) {
    case at::kFloat:
      return cuda::ElementType::kFloat32;
    case at::kBFloat16:
      return cuda::ElementType::kBFloat16;
    case at::kHalf:
      return cuda::ElementType::kFloat16;
    default:
      TORCH_CHECK(false, "fused kernels: unsupported dtype ", x.scalar_type());
  }
  return cuda::ElementType::kFloat32;
}

void check_launch(cudaError_t status, const char* kernel) {
  TORCH_CHECK(status == cudaSuccess, kernel, ": ", cudaGetErrorString(status));
}

// `t` on x's device in x's dtype (a no-op for the model's own tensors).
at::Tensor like(const at::Tensor& t, const at::Tensor& x) {
  return t.to(x.device(), x.scalar_type());
}
#endif

}  // namespace

bool fused_kernels_apply(const at::Tensor& x) {
#ifdef WORLDCAST_HAS_CUDA
  const auto type = x.scalar_type();
  return x.is_cuda() && !c10::GradMode::is_enabled() &&
         (type == at::kFloat || type == at::kBFloat16 || type == at::kHalf);
#else
  (void)x;
  return false;
#endif
}

at::Tensor fused_layer_norm_modulate(const at::Tensor& x, const at::Tensor& shift,
                                     const at::Tensor& scale, double eps) {
#ifdef WORLDCAST_HAS_CUDA
  TORCH_CHECK(fused_kernels_apply(x),
              "fused_layer_norm_modulate: needs a CUDA tensor, no autograd");
  TORCH_CHECK(x.dim() == 3 && shift.dim() == 3 && shift.sizes() == scale.sizes() &&
                  shift.size(0) == x.size(0) && shift.size(2) == x.size(2) &&
                  x.size(1) % shift.size(1) == 0,
              "fused_layer_norm_modulate: x [B, F·N, D] and shift, scale [B, F, D], got ",
              x.sizes(), " and ", shift.sizes());
  const c10::cuda::CUDAGuard guard(x.device());
  const at::Tensor input = x.contiguous();
  // One stride pair serves both: make them agree (they are views of one modulation tensor).
  at::Tensor shift_d = like(shift, x);
  at::Tensor scale_d = like(scale, x);
  if (shift_d.stride(2) != 1 || scale_d.stride(2) != 1 || shift_d.strides() != scale_d.strides()) {
    shift_d = shift_d.contiguous();
    scale_d = scale_d.contiguous();
  }
  at::Tensor out = at::empty_like(input);
  cuda::LayerNormModulateParams p;
  p.x = input.data_ptr();
  p.out = out.data_ptr();
  p.shift = shift_d.data_ptr();
  p.scale = scale_d.data_ptr();
  p.rows = input.size(0) * input.size(1);
  p.dim = input.size(2);
  p.frames = shift.size(1);
  p.tokens_per_frame = input.size(1) / shift.size(1);
  p.mod_stride_b = shift_d.stride(0);
  p.mod_stride_f = shift_d.stride(1);
  p.eps = static_cast<float>(eps);
  p.type = element_type(input);
  check_launch(cuda::launch_layer_norm_modulate(p, at::cuda::getCurrentCUDAStream().stream()),
               "layer_norm_modulate");
  return out;
#else
  (void)x, (void)shift, (void)scale, (void)eps;
  TORCH_CHECK(false, "fused_layer_norm_modulate: this build has no CUDA kernels");
#endif
}

at::Tensor fused_qk_norm_rope(const at::Tensor& y, const at::Tensor& weight,
                              const RopeRotation& rotation, int heads, double eps) {
#ifdef WORLDCAST_HAS_CUDA
  TORCH_CHECK(fused_kernels_apply(y), "fused_qk_norm_rope: needs a CUDA tensor, no autograd");
  TORCH_CHECK(y.dim() == 3 && heads > 0 && y.size(2) % heads == 0 && weight.numel() == y.size(2),
              "fused_qk_norm_rope: y [B, T, heads·Dh] and weight [heads·Dh], got ", y.sizes(),
              " and ", weight.sizes());
  const int64_t b = y.size(0), t = y.size(1), head_dim = y.size(2) / heads;
  const at::Tensor cos = like(rotation.cos, y).contiguous();
  const at::Tensor sin_signed = like(rotation.sin_signed, y).contiguous();
  // [T, Dh] shared by the batch, or [B, 1, T, Dh] per batch element (rope_table_at's forms).
  const bool shared = cos.dim() == 2;
  TORCH_CHECK(cos.sizes() == sin_signed.sizes() &&
                  (shared ? cos.sizes() == at::IntArrayRef({t, head_dim})
                          : cos.sizes() == at::IntArrayRef({b, 1, t, head_dim})),
              "fused_qk_norm_rope: rotation must be [T, Dh] or [B, 1, T, Dh] for y ", y.sizes(),
              ", got ", cos.sizes());
  const c10::cuda::CUDAGuard guard(y.device());
  const at::Tensor input = y.contiguous();
  const at::Tensor weight_d = like(weight, y).contiguous();
  at::Tensor out = at::empty({b, heads, t, head_dim}, input.options());
  cuda::QkNormRopeParams p;
  p.y = input.data_ptr();
  p.out = out.data_ptr();
  p.weight = weight_d.data_ptr();
  p.cos = cos.data_ptr();
  p.sin_signed = sin_signed.data_ptr();
  p.batch = b;
  p.tokens = t;
  p.heads = heads;
  p.head_dim = head_dim;
  p.rotation_stride_b = shared ? 0 : t * head_dim;
  p.eps = static_cast<float>(eps);
  p.type = element_type(input);
  check_launch(cuda::launch_qk_norm_rope(p, at::cuda::getCurrentCUDAStream().stream()),
               "qk_norm_rope");
  return out;
#else
  (void)y, (void)weight, (void)rotation, (void)heads, (void)eps;
  TORCH_CHECK(false, "fused_qk_norm_rope: this build has no CUDA kernels");
#endif
}

at::Tensor fused_linear_gelu(const at::Tensor& x, const at::Tensor& weight,
                             const at::Tensor& bias) {
#if defined(WORLDCAST_HAS_CUDA) && TORCH_VERSION_MAJOR >= 2
  TORCH_CHECK(fused_kernels_apply(x), "fused_linear_gelu: needs a CUDA tensor, no autograd");
  std::vector<int64_t> out_shape(x.sizes().begin(), x.sizes().end());
  out_shape.back() = weight.size(0);
  // use_gelu selects cuBLASLt's GELU_BIAS epilogue (tanh form); where cuBLASLt declines the
  // shape, ATen falls back to addmm followed by an in-place tanh GELU: the same function.
  return at::_addmm_activation(bias, x.reshape({-1, x.size(-1)}), weight.t(), 1, 1,
                               /*use_gelu=*/true)
      .view(out_shape);
#else
  (void)x, (void)weight, (void)bias;
  TORCH_CHECK(false, "fused_linear_gelu: this build has no CUDA kernels");
#endif
}

at::Tensor layer_norm_modulate(const at::Tensor& x, const at::Tensor& shift,
                               const at::Tensor& scale, double eps) {
  if (fused_kernels_apply(x)) return fused_layer_norm_modulate(x, shift, scale, eps);
  return modulate(layer_norm(x, eps), shift, scale);
}

at::Tensor qk_norm_rope(const at::Tensor& y, const at::Tensor& weight, const RopeRotation& rotation,
                        int heads, double eps) {
  if (fused_kernels_apply(y)) return fused_qk_norm_rope(y, weight, rotation, heads, eps);
  const at::Tensor normed = rms_norm(y, weight, eps);
  const at::Tensor split =
      normed.view({y.size(0), y.size(1), heads, y.size(2) / heads}).transpose(1, 2);
  return apply_rotation(split, rotation);
}

at::Tensor linear_gelu(const at::Tensor& x, const at::Tensor& weight, const at::Tensor& bias) {
#if TORCH_VERSION_MAJOR >= 2
  if (fused_kernels_apply(x)) return fused_linear_gelu(x, weight, bias);
#endif
  return at::gelu(at::linear(x, weight, bias), "tanh");
}

}  // namespace wc::model
