// The CUDA decode/convert step of the GPU frame path: a model frame [3, H, W] in [-1, 1]
// (float32 or bfloat16, any strides) -> RGBA8 rows written straight into an imported Vulkan
// buffer. Parameters are plain pointers and sizes; the launch lives in rgba_convert.cu.
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>

namespace wc::ui::cuda {

enum class RgbaSourceType { kFloat32, kBFloat16 };

struct RgbaConvertParams {
  const void* src = nullptr;
  RgbaSourceType src_type = RgbaSourceType::kFloat32;
  int64_t channel_stride = 0;  // element strides of src
  int64_t row_stride = 0;
  int64_t column_stride = 1;
  int width = 0;
  int height = 0;
  uint8_t* dst = nullptr;  // width * 4 bytes per row, rows back to back; 4-byte aligned
};

// Enqueues the conversion on `stream`. The arithmetic is rollout::decode_rgba's, step for step
// (see Note [Decode parity] in rgba_convert.cu), so both frame paths give the same bytes.
// Returns the launch status (cudaSuccess or the configuration error).
cudaError_t launch_rgba_convert(const RgbaConvertParams& params, cudaStream_t stream);

}  // namespace wc::ui::cuda
