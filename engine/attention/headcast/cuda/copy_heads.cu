// See copy_heads.h. Each thread moves one vector of W bytes, W the widest of 16, 8, 4, 2, 1 that
// divides every address and stride, so a bf16 head row of 128 values is 16 coalesced 16-byte
// loads. ATen's index_select moves one element per thread with the index arithmetic of a general
// gather, which reached about an eighth of the memory bandwidth at Wan's shapes.
#include <cstdint>
#include <initializer_list>

#include "engine/attention/headcast/cuda/copy_heads.h"

namespace wc::attention::cuda {
namespace {

template <typename Vector>
__global__ void copy_heads_kernel(CopyHeadsParams p) {
  const int64_t per_row = p.row_bytes / static_cast<int64_t>(sizeof(Vector));
  const int64_t total = p.batch * p.heads * p.rows * per_row;
  const auto* src = static_cast<const char*>(p.src);
  auto* dst = static_cast<char*>(p.dst);
  for (int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; i < total;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    int64_t rest = i;
    const int64_t v = rest % per_row;
    rest /= per_row;
    const int64_t r = rest % p.rows;
    rest /= p.rows;
    const int64_t j = rest % p.heads;
    const int64_t b = rest / p.heads;
    const int64_t hs = p.src_head != nullptr ? p.src_head[j] : j;
    const int64_t hd = p.dst_head != nullptr ? p.dst_head[j] : j;
    const int64_t offset = v * static_cast<int64_t>(sizeof(Vector));
    const Vector value = *reinterpret_cast<const Vector*>(
        src + b * p.src_stride_b + hs * p.src_stride_h + r * p.src_stride_r + offset);
    *reinterpret_cast<Vector*>(dst + b * p.dst_stride_b + hd * p.dst_stride_h + r * p.dst_stride_r +
                               offset) = value;
  }
}

// The widest vector (bytes) dividing every address and stride of the copy.
int vector_bytes(const CopyHeadsParams& p) {
  const uint64_t all =
      reinterpret_cast<uintptr_t>(p.src) | reinterpret_cast<uintptr_t>(p.dst) |
      static_cast<uint64_t>(p.row_bytes) | static_cast<uint64_t>(p.src_stride_b) |
      static_cast<uint64_t>(p.src_stride_h) | static_cast<uint64_t>(p.src_stride_r) |
      static_cast<uint64_t>(p.dst_stride_b) | static_cast<uint64_t>(p.dst_stride_h) |
      static_cast<uint64_t>(p.dst_stride_r);
  for (int width : {16, 8, 4, 2}) {
    if (all % static_cast<uint64_t>(width) == 0) return width;
  }
  return 1;
}

template <typename Vector>
void launch(const CopyHeadsParams& p, cudaStream_t stream) {
  constexpr int kThreads = 256;
  const int64_t total =
      p.batch * p.heads * p.rows * (p.row_bytes / static_cast<int64_t>(sizeof(Vector)));
  // Enough blocks to fill the GPU several times over; the loop strides over the rest.
  const int64_t blocks = (total + kThreads - 1) / kThreads;
  const unsigned int grid = static_cast<unsigned int>(blocks < 8192 ? blocks : 8192);
  copy_heads_kernel<Vector><<<grid, kThreads, 0, stream>>>(p);
}

}  // namespace

cudaError_t launch_copy_heads(const CopyHeadsParams& p, cudaStream_t stream) {
  if (p.src == nullptr || p.dst == nullptr || p.heads < 0 || p.batch < 0 || p.rows < 0 ||
      p.row_bytes <= 0) {
    return cudaErrorInvalidValue;
  }
  if (p.heads == 0 || p.batch == 0 || p.rows == 0) return cudaSuccess;
  switch (vector_bytes(p)) {
    case 16:
      launch<int4>(p, stream);
      break;
    case 8:
      launch<int2>(p, stream);
      break;
    case 4:
      launch<int>(p, stream);
      break;
    case 2:
      launch<short>(p, stream);
      break;
    default:
      launch<char>(p, stream);
      break;
  }
  return cudaGetLastError();
}

}  // namespace wc::attention::cuda
