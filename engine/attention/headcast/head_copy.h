// The CUDA fast path of HeadSelection's gather and scatter (cuda/copy_heads.cu): whole head rows
// moved as wide vectors. Each form declines (nullopt / false) where it does not apply: a CPU
// tensor or build, a head dimension other than 1, or a layout whose dimensions between the head
// and the last cannot be walked with one stride. The caller then takes ATen's index ops.
#pragma once

#include <ATen/ATen.h>

#include <optional>

namespace wc::attention {

// x[:, index] (index: int64 on x's device), contiguous.
std::optional<at::Tensor> gather_heads_fast(const at::Tensor& x, const at::Tensor& index);
// out[:, index] = src; true when done.
bool scatter_heads_fast(at::Tensor& out, const at::Tensor& src, const at::Tensor& index);

}  // namespace wc::attention
