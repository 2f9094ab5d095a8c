// Launch interface of the DiT's fused normalisation kernels (fused_norms.cu): plain parameter
// structs of pointers, sizes and strides, no ATen, so the .cu file builds fast and alone.
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>

namespace wc::model::cuda {

enum class ElementType { kFloat32, kBFloat16, kFloat16 };

// out[r] = LayerNorm(x[r]) · (1 + scale[b, f]) + shift[b, f] for each row r = (b, f, n) of
// `rows` = B·F·N contiguous rows of `dim` values; shift/scale element (b, f, d) lives at
// b·mod_stride_b + f·mod_stride_f + d. Statistics in float32, one rounding at the store.
struct LayerNormModulateParams {
  const void* x = nullptr;
  void* out = nullptr;
  const void* shift = nullptr;
  const void* scale = nullptr;
  int64_t rows = 0;
  int64_t dim = 0;
  int64_t frames = 0;
  int64_t tokens_per_frame = 0;
  int64_t mod_stride_b = 0;
  int64_t mod_stride_f = 0;
  float eps = 1e-6f;
  ElementType type = ElementType::kBFloat16;
};
cudaError_t launch_layer_norm_modulate(const LayerNormModulateParams& params, cudaStream_t stream);

// The attention input of q or k: y is [B, T, H·Dh] (a projection's output), weight [H·Dh];
// out[b, h, t] = rotate_t(rms_norm(y[b, t]) · weight)[h·Dh, (h+1)·Dh), written contiguous
// [B, H, T, Dh]. The rotation is RopeRotation's (cos twice per pair, then −sin, +sin):
// out[i] = v[i]·cos[t, i] + v[i ^ 1]·sin_signed[t, i]; its rows for batch b start at
// b·rotation_stride_b (0 when the batch shares one table).
struct QkNormRopeParams {
  const void* y = nullptr;
  void* out = nullptr;
  const void* weight = nullptr;
  const void* cos = nullptr;
  const void* sin_signed = nullptr;
  int64_t batch = 0;
  int64_t tokens = 0;
  int64_t heads = 0;
  int64_t head_dim = 0;
  int64_t rotation_stride_b = 0;
  float eps = 1e-6f;
  ElementType type = ElementType::kBFloat16;
};
cudaError_t launch_qk_norm_rope(const QkNormRopeParams& params, cudaStream_t stream);

}  // namespace wc::model::cuda
