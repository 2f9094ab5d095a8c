// See head_copy.h. Without WORLDCAST_HAS_CUDA every form declines.
#include "engine/attention/headcast/head_copy.h"

#include <vector>

#ifdef WORLDCAST_HAS_CUDA
#include <ATen/cuda/CUDAContext.h>
#include <c10/cuda/CUDAGuard.h>

#include "engine/attention/headcast/cuda/copy_heads.h"
#endif

namespace wc::attention {

#ifdef WORLDCAST_HAS_CUDA
namespace {

// x as [B, H, R, row] rows: strides in bytes, or nullopt when the last dimension is not
// contiguous or the dimensions between head and last do not collapse into one stride.
struct HeadRows {
  int64_t batch = 0, heads = 0, rows = 1, row_bytes = 0;
  int64_t stride_b = 0, stride_h = 0, stride_r = 0;
};

std::optional<HeadRows> head_rows(const at::Tensor& x) {
  if (!x.is_cuda() || x.dim() < 3 || x.stride(-1) != 1) return std::nullopt;
  const int64_t item = static_cast<int64_t>(x.element_size());
  HeadRows r;
  r.batch = x.size(0);
  r.heads = x.size(1);
  r.row_bytes = x.size(-1) * item;
  r.stride_b = x.stride(0) * item;
  r.stride_h = x.stride(1) * item;
  int64_t inner_size = 1, inner_stride = 0;
  bool any = false;
  for (int64_t d = x.dim() - 2; d >= 2; --d) {
    if (x.size(d) == 1) continue;  // a size-1 dimension's stride says nothing
    if (any && x.stride(d) != inner_stride * inner_size) return std::nullopt;
    if (!any) r.stride_r = x.stride(d) * item;
    any = true;
    inner_stride = x.stride(d);
    inner_size = x.size(d);
    r.rows *= x.size(d);
  }
  return r;
}

void copy(const at::Tensor& src, const HeadRows& s, at::Tensor& dst, const HeadRows& d,
          const at::Tensor* src_head, const at::Tensor* dst_head, int64_t heads) {
  const c10::cuda::CUDAGuard guard(src.device());
  cuda::CopyHeadsParams p;
  p.src = src.data_ptr();
  p.dst = dst.data_ptr();
  p.src_head = src_head != nullptr ? src_head->data_ptr<int64_t>() : nullptr;
  p.dst_head = dst_head != nullptr ? dst_head->data_ptr<int64_t>() : nullptr;
  p.heads = heads;
  p.batch = s.batch;
  p.rows = s.rows;
  p.row_bytes = s.row_bytes;
  p.src_stride_b = s.stride_b;
  p.src_stride_h = s.stride_h;
  p.src_stride_r = s.stride_r;
  p.dst_stride_b = d.stride_b;
  p.dst_stride_h = d.stride_h;
  p.dst_stride_r = d.stride_r;
  const cudaError_t status =
      cuda::launch_copy_heads(p, at::cuda::getCurrentCUDAStream(src.device().index()).stream());
  TORCH_CHECK(status == cudaSuccess, "copy_heads: ", cudaGetErrorString(status));
}

bool usable_index(const at::Tensor& index, const at::Tensor& x) {
  return index.is_cuda() && index.device() == x.device() && index.scalar_type() == at::kLong &&
         index.dim() == 1 && index.is_contiguous();
}

}  // namespace

std::optional<at::Tensor> gather_heads_fast(const at::Tensor& x, const at::Tensor& index) {
  const auto s = head_rows(x);
  if (!s || !usable_index(index, x)) return std::nullopt;
  std::vector<int64_t> sizes = x.sizes().vec();
  sizes[1] = index.size(0);
  at::Tensor out = at::empty(sizes, x.options());
  const auto d = head_rows(out);
  if (!d) return std::nullopt;
  copy(x, *s, out, *d, &index, nullptr, index.size(0));
  return out;
}

bool scatter_heads_fast(at::Tensor& out, const at::Tensor& src, const at::Tensor& index) {
  const auto d = head_rows(out);
  const auto s = head_rows(src);
  if (!d || !s || !usable_index(index, out) || src.device() != out.device() ||
      src.scalar_type() != out.scalar_type() || src.dim() != out.dim() ||
      src.size(1) != index.size(0)) {
    return false;
  }
  for (int64_t i = 0; i < src.dim(); ++i) {
    if (i != 1 && src.size(i) != out.size(i)) return false;
  }
  copy(src, *s, out, *d, nullptr, &index, index.size(0));
  return true;
}
#else
std::optional<at::Tensor> gather_heads_fast(const at::Tensor&, const at::Tensor&) {
  return std::nullopt;
}

bool scatter_heads_fast(at::Tensor&, const at::Tensor&, const at::Tensor&) {
  return false;
}
#endif

}  // namespace wc::attention
