// The fused normalisation kernels: one thread block per token row; the row's statistics are
// reduced in float32 over the block, then the row is normalised, modulated or rotated and stored
// with one rounding. Each replaces 6–12 separate memory passes of the composed ATen form.
#include "engine/model/cuda/fused_norms.h"

#include <cuda_bf16.h>
#include <cuda_fp16.h>

namespace wc::model::cuda {
namespace {

__device__ __forceinline__ float to_float(float v) {
  return v;
}
__device__ __forceinline__ float to_float(__nv_bfloat16 v) {
  return __bfloat162float(v);
}
__device__ __forceinline__ float to_float(__half v) {
  return __half2float(v);
}

template <typename T>
__device__ __forceinline__ T from_float(float v);
template <>
__device__ __forceinline__ float from_float<float>(float v) {
  return v;
}
template <>
__device__ __forceinline__ __nv_bfloat16 from_float<__nv_bfloat16>(float v) {
  return __float2bfloat16_rn(v);
}
template <>
__device__ __forceinline__ __half from_float<__half>(float v) {
  return __float2half_rn(v);
}

// Sum of one value per thread over the whole block (blockDim.x a multiple of 32, ≤ 1024).
// `shared` holds 32 floats; the trailing barrier lets the caller reduce again with it.
__device__ float block_sum(float value, float* shared) {
  for (int offset = 16; offset > 0; offset >>= 1)
    value += __shfl_xor_sync(0xffffffffu, value, offset);
  const int lane = threadIdx.x & 31;
  const int warp = threadIdx.x >> 5;
  if (lane == 0) shared[warp] = value;
  __syncthreads();
  if (warp == 0) {
    value = lane < static_cast<int>(blockDim.x >> 5) ? shared[lane] : 0.0f;
    for (int offset = 16; offset > 0; offset >>= 1)
      value += __shfl_xor_sync(0xffffffffu, value, offset);
    if (lane == 0) shared[0] = value;
  }
  __syncthreads();
  const float total = shared[0];
  __syncthreads();
  return total;
}

template <typename T>
__global__ void layer_norm_modulate_kernel(LayerNormModulateParams p) {
  __shared__ float shared[32];
  const int64_t row = blockIdx.x;
  const int64_t dim = p.dim;
  const T* x = static_cast<const T*>(p.x) + row * dim;
  float sum = 0.0f;
  for (int64_t d = threadIdx.x; d < dim; d += blockDim.x) sum += to_float(x[d]);
  const float mean = block_sum(sum, shared) / static_cast<float>(dim);
  // Two passes (mean, then centred squares) as at::layer_norm's accuracy needs; the row is a few
  // kilobytes, so the second and third reads come from L1.
  float squares = 0.0f;
  for (int64_t d = threadIdx.x; d < dim; d += blockDim.x) {
    const float centred = to_float(x[d]) - mean;
    squares += centred * centred;
  }
  const float rstd = rsqrtf(block_sum(squares, shared) / static_cast<float>(dim) + p.eps);
  const int64_t b = row / (p.frames * p.tokens_per_frame);
  const int64_t f = (row / p.tokens_per_frame) % p.frames;
  const int64_t mod = b * p.mod_stride_b + f * p.mod_stride_f;
  const T* shift = static_cast<const T*>(p.shift) + mod;
  const T* scale = static_cast<const T*>(p.scale) + mod;
  T* out = static_cast<T*>(p.out) + row * dim;
  for (int64_t d = threadIdx.x; d < dim; d += blockDim.x) {
    const float normed = (to_float(x[d]) - mean) * rstd;
    out[d] = from_float<T>(normed * (1.0f + to_float(scale[d])) + to_float(shift[d]));
  }
}

template <typename T>
__global__ void qk_norm_rope_kernel(QkNormRopeParams p) {
  __shared__ float shared[32];
  const int64_t row = blockIdx.x;  // (b, t)
  const int64_t b = row / p.tokens;
  const int64_t t = row - b * p.tokens;
  const int64_t dim = p.heads * p.head_dim;
  const T* y = static_cast<const T*>(p.y) + row * dim;
  const T* weight = static_cast<const T*>(p.weight);
  float squares = 0.0f;
  for (int64_t d = threadIdx.x; d < dim; d += blockDim.x) {
    const float v = to_float(y[d]);
    squares += v * v;
  }
  const float inv_rms = rsqrtf(block_sum(squares, shared) / static_cast<float>(dim) + p.eps);
  const int64_t rotation_row = b * p.rotation_stride_b + t * p.head_dim;
  const T* cos = static_cast<const T*>(p.cos) + rotation_row;
  const T* sin_signed = static_cast<const T*>(p.sin_signed) + rotation_row;
  T* out = static_cast<T*>(p.out);
  for (int64_t d = threadIdx.x; d < dim; d += blockDim.x) {
    const int64_t h = d / p.head_dim;
    const int64_t i = d - h * p.head_dim;
    const int64_t partner = d ^ 1;  // the other element of d's rotation pair (head_dim is even)
    const float v = to_float(y[d]) * inv_rms * to_float(weight[d]);
    const float w = to_float(y[partner]) * inv_rms * to_float(weight[partner]);
    out[((b * p.heads + h) * p.tokens + t) * p.head_dim + i] =
        from_float<T>(v * to_float(cos[i]) + w * to_float(sin_signed[i]));
  }
}

// Threads per row: enough for about four values each, a whole number of warps, at most 1024.
unsigned int threads_for(int64_t dim) {
  const int64_t warps = (dim / 4 + 31) / 32;
  return static_cast<unsigned int>(32 * (warps < 1 ? 1 : (warps > 32 ? 32 : warps)));
}

template <template <typename> class Launch, typename Params>
cudaError_t dispatch(const Params& p, int64_t rows, int64_t dim, cudaStream_t stream) {
  if (rows <= 0) return cudaSuccess;
  if (rows > 0x7fffffff || dim <= 0) return cudaErrorInvalidValue;
  const dim3 grid(static_cast<unsigned int>(rows));
  const dim3 block(threads_for(dim));
  switch (p.type) {
    case ElementType::kFloat32:
      Launch<float>::run(grid, block, p, stream);
      break;
    case ElementType::kBFloat16:
      Launch<__nv_bfloat16>::run(grid, block, p, stream);
      break;
    case ElementType::kFloat16:
      Launch<__half>::run(grid, block, p, stream);
      break;
  }
  return cudaGetLastError();
}

template <typename T>
struct LayerNormModulateLaunch {
  static void run(dim3 grid, dim3 block, const LayerNormModulateParams& p, cudaStream_t stream) {
    layer_norm_modulate_kernel<T><<<grid, block, 0, stream>>>(p);
  }
};

template <typename T>
struct QkNormRopeLaunch {
  static void run(dim3 grid, dim3 block, const QkNormRopeParams& p, cudaStream_t stream) {
    qk_norm_rope_kernel<T><<<grid, block, 0, stream>>>(p);
  }
};

}  // namespace

cudaError_t launch_layer_norm_modulate(const LayerNormModulateParams& params, cudaStream_t stream) {
  if (params.x == nullptr || params.out == nullptr || params.shift == nullptr ||
      params.scale == nullptr || params.frames <= 0 || params.tokens_per_frame <= 0) {
    return cudaErrorInvalidValue;
  }
  return dispatch<LayerNormModulateLaunch>(params, params.rows, params.dim, stream);
}

cudaError_t launch_qk_norm_rope(const QkNormRopeParams& params, cudaStream_t stream) {
  if (params.y == nullptr || params.out == nullptr || params.weight == nullptr ||
      params.cos == nullptr || params.sin_signed == nullptr || params.tokens <= 0 ||
      params.heads <= 0 || params.head_dim <= 0 || params.head_dim % 2 != 0) {
    return cudaErrorInvalidValue;
  }
  return dispatch<QkNormRopeLaunch>(params, params.batch * params.tokens,
                                    params.heads * params.head_dim, stream);
}

}  // namespace wc::model::cuda
