// The convert kernel: one thread per pixel reads three channel values and stores one RGBA8 word.
#include "ui/frames/cuda/rgba_convert.h"

namespace wc::ui::cuda {
namespace {

// bfloat16 is the top half of a float32, so widening is a shift (exact, no cuda_bf16.h needed).
__device__ __forceinline__ float load(const float* p) {
  return *p;
}
__device__ __forceinline__ float load(const uint16_t* p) {
  return __uint_as_float(static_cast<unsigned int>(*p) << 16);
}

// Note [Decode parity]
// rollout::decode_rgba computes, in float32, round((clamp(x, -1, 1) + 1) * 127.5) with one
// rounding per operation and round-half-to-even (std::nearbyint). The same steps here: the
// explicit _rn intrinsics keep nvcc from fusing the add and multiply into one FMA (which
// rounds once and can move a .5 tie), and rintf rounds half to even.
__device__ __forceinline__ unsigned int quantise(float x) {
  const float clamped = fminf(fmaxf(x, -1.0f), 1.0f);
  const float scaled = __fmul_rn(__fadd_rn(clamped, 1.0f), 127.5f);
  return static_cast<unsigned int>(rintf(scaled));
}

template <typename T>
__global__ void rgba_convert_kernel(RgbaConvertParams p) {
  const int x = static_cast<int>(blockIdx.x * blockDim.x + threadIdx.x);
  const int y = static_cast<int>(blockIdx.y * blockDim.y + threadIdx.y);
  if (x >= p.width || y >= p.height) return;
  const T* src = static_cast<const T*>(p.src) + y * p.row_stride + x * p.column_stride;
  const unsigned int r = quantise(load(src));
  const unsigned int g = quantise(load(src + p.channel_stride));
  const unsigned int b = quantise(load(src + 2 * p.channel_stride));
  // Little-endian word: bytes R, G, B, A in memory, as VK_FORMAT_R8G8B8A8_UNORM reads them.
  const unsigned int word = r | (g << 8) | (b << 16) | (255u << 24);
  reinterpret_cast<unsigned int*>(p.dst)[static_cast<int64_t>(y) * p.width + x] = word;
}

}  // namespace

cudaError_t launch_rgba_convert(const RgbaConvertParams& params, cudaStream_t stream) {
  if (params.width <= 0 || params.height <= 0 || params.src == nullptr || params.dst == nullptr) {
    return cudaErrorInvalidValue;
  }
  const dim3 block(32, 8);
  const dim3 grid((static_cast<unsigned int>(params.width) + block.x - 1) / block.x,
                  (static_cast<unsigned int>(params.height) + block.y - 1) / block.y);
  if (params.src_type == RgbaSourceType::kBFloat16) {
    rgba_convert_kernel<uint16_t><<<grid, block, 0, stream>>>(params);
  } else {
    rgba_convert_kernel<float><<<grid, block, 0, stream>>>(params);
  }
  return cudaGetLastError();
}

}  // namespace wc::ui::cuda
