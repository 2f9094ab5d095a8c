// See biased_attention.h and Note [TempCache bias]. LibTorch version differences stay here.
#include "engine/attention/biased_attention.h"

#include <torch/version.h>

#include <cmath>

#include "engine/attention/sdpa.h"
#include "engine/core/error.h"

namespace wc::attention {

int64_t padded_head_dim(int64_t head_dim) {
  return (head_dim + 2 + 7) / 8 * 8;
}

BiasPath resolve_bias_path(BiasPath path, const at::Device& device) {
  if (path != BiasPath::kAuto) return path;
  return fused_attention_available(device) ? BiasPath::kExtraDim : BiasPath::kMask;
}

void write_bias_dims(at::Tensor& keys, const at::Tensor& bias, int64_t head_dim) {
  const at::Tensor scaled = bias.to(at::kFloat) * std::sqrt(static_cast<double>(head_dim));
  const at::Tensor hi = scaled.to(keys.scalar_type());
  const at::Tensor lo = scaled - hi.to(at::kFloat);
  keys.select(-1, head_dim).copy_(hi);
  keys.select(-1, head_dim + 1).copy_(lo);
}

at::Tensor biased_attention(const at::Tensor& q, const at::Tensor& keys, const at::Tensor& values,
                            const at::Tensor& bias, BiasPath path) {
  const int64_t d = q.size(-1);
  const int64_t dp = keys.size(-1);
  if (dp != padded_head_dim(d) || values.size(-1) != dp) {
    throw Error("tempcache attention",
                "keys/values must be padded to " + std::to_string(padded_head_dim(d)) + " dims");
  }
  const double scale = 1.0 / std::sqrt(static_cast<double>(d));
  switch (resolve_bias_path(path, q.device())) {
    case BiasPath::kExtraDim: {
      std::vector<int64_t> sizes = q.sizes().vec();
      sizes.back() = 2;
      const at::Tensor ones = at::ones(sizes, q.options());
      sizes.back() = dp - d - 2;
      const at::Tensor q_padded = at::cat({q, ones, at::zeros(sizes, q.options())}, -1);
#if TORCH_VERSION_MAJOR >= 2
      if (q.is_cuda()) {
        return at::scaled_dot_product_attention(q_padded, keys, values, {}, 0.0, false, scale)
            .narrow(-1, 0, d);
      }
#endif
      return chunked_attention(q_padded, keys, values, std::nullopt, scale).narrow(-1, 0, d);
    }
    case BiasPath::kMask: {
      const at::Tensor k = keys.narrow(-1, 0, d);
      const at::Tensor v = values.narrow(-1, 0, d);
#if TORCH_VERSION_MAJOR >= 2
      if (q.is_cuda()) {
        return at::scaled_dot_product_attention(q, k, v, bias.unsqueeze(-2).to(q.scalar_type()),
                                                0.0, false, scale);
      }
#endif
      return chunked_attention(q, k, v, bias.unsqueeze(-2), scale);
    }
    default:
      return reference_attention(q, keys.narrow(-1, 0, d), values.narrow(-1, 0, d), std::nullopt,
                                 bias.unsqueeze(-2), scale);
  }
}

}  // namespace wc::attention
