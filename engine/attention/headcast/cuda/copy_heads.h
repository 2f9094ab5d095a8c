// Launch interface of the head copy kernel (copy_heads.cu): plain structs, no ATen.
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>

namespace wc::attention::cuda {

// For j < heads, b < batch, r < rows: the `row_bytes` bytes of row (b, src_head[j], r) of `src`
// go to row (b, dst_head[j], r) of `dst`. A null head array means the identity (j). Strides are
// in bytes; each row's bytes are contiguous. Rows of one head need not be contiguous (a strided
// middle dimension), so one launch serves a head-major gather and a scatter into a token-major
// output alike.
struct CopyHeadsParams {
  const void* src = nullptr;
  void* dst = nullptr;
  const int64_t* src_head = nullptr;  // device array of `heads` entries, or null
  const int64_t* dst_head = nullptr;  // device array of `heads` entries, or null
  int64_t heads = 0;
  int64_t batch = 0;
  int64_t rows = 0;
  int64_t row_bytes = 0;
  int64_t src_stride_b = 0, src_stride_h = 0, src_stride_r = 0;
  int64_t dst_stride_b = 0, dst_stride_h = 0, dst_stride_r = 0;
};
cudaError_t launch_copy_heads(const CopyHeadsParams& params, cudaStream_t stream);

}  // namespace wc::attention::cuda
