// See sdpa.h. Version differences live here and nowhere else.
#include "engine/attention/sdpa.h"

#include <ATen/core/grad_mode.h>
#include <torch/version.h>

#include <algorithm>
#include <cmath>
#include <vector>

#include "engine/core/error.h"

namespace wc::attention {

at::Tensor reference_attention(const at::Tensor& q, const at::Tensor& k, const at::Tensor& v,
                               const std::optional<at::Tensor>& mask,
                               const std::optional<at::Tensor>& key_bias,
                               std::optional<double> scale) {
  const double s = scale.value_or(1.0 / std::sqrt(static_cast<double>(q.size(-1))));
  const at::Tensor qf = q.to(at::kFloat);
  const at::Tensor kf = k.to(at::kFloat);
  const at::Tensor vf = v.to(at::kFloat);
  at::Tensor logits = at::matmul(qf, kf.transpose(-2, -1)).mul_(s);
  if (key_bias) logits.add_(key_bias->to(at::kFloat));
  if (mask) logits.masked_fill_(mask->logical_not(), -std::numeric_limits<float>::infinity());
  const at::Tensor weights = at::softmax(logits, -1);
  return at::matmul(weights, vf).to(q.scalar_type());
}

at::Tensor chunked_attention(const at::Tensor& q, const at::Tensor& k, const at::Tensor& v,
                             const std::optional<at::Tensor>& key_bias,
                             std::optional<double> scale) {
  const int64_t rank = q.dim();
  if (rank < 2 || k.dim() != rank || v.dim() != rank || q.size(-1) != k.size(-1) ||
      k.size(-2) != v.size(-2)) {
    throw Error("chunked attention",
                "q, k and v must be [..., T, D] of one rank, q and k of one D and k and v of one "
                "key count");
  }
  const int64_t tq = q.size(-2), tk = k.size(-2), d = q.size(-1), dv = v.size(-1);
  // Leading dims broadcast as matmul's do.
  std::vector<int64_t> lead =
      at::infer_size(q.sizes().slice(0, rank - 2), k.sizes().slice(0, rank - 2));
  lead = at::infer_size(lead, v.sizes().slice(0, rank - 2));
  const auto sized = [&](int64_t rows, int64_t cols) {
    std::vector<int64_t> sizes = lead;
    sizes.push_back(rows);
    sizes.push_back(cols);
    return sizes;
  };
  int64_t batch = 1;
  for (int64_t n : lead) batch *= n;
  // The slabs are written into buffers, which autograd cannot record (training on the CPU).
  const bool recorded =
      at::GradMode::is_enabled() && (q.requires_grad() || k.requires_grad() || v.requires_grad() ||
                                     (key_bias && key_bias->requires_grad()));
  if (recorded || batch == 0 || tq == 0 || tk == 0) {
    return reference_attention(q, k, v, std::nullopt, key_bias, scale);
  }
  const double s = scale.value_or(1.0 / std::sqrt(static_cast<double>(d)));
  const at::Tensor qf = (q.to(at::kFloat) * s).expand(sized(tq, d)).reshape({batch, tq, d});
  const at::Tensor kt =
      k.to(at::kFloat).expand(sized(tk, d)).reshape({batch, tk, d}).transpose(1, 2);
  const at::Tensor vf = v.to(at::kFloat).expand(sized(tk, dv)).reshape({batch, tk, dv});
  at::Tensor bias;
  if (key_bias) bias = key_bias->to(at::kFloat).expand(sized(1, tk)).reshape({batch, 1, tk});
  // Slabs of `rows` query rows of `entries` batch entries, so that one logit buffer of at most
  // kChunkLogits floats serves them all: as many rows as fit first, then batch entries.
  const int64_t rows = std::clamp<int64_t>(kChunkLogits / tk, 1, tq);
  const int64_t entries = std::clamp<int64_t>(kChunkLogits / (rows * tk), 1, batch);
  at::Tensor out = at::empty({batch, tq, dv}, qf.options());
  at::Tensor logits = at::empty({entries, rows, tk}, qf.options());
  for (int64_t b = 0; b < batch; b += entries) {
    const int64_t nb = std::min(entries, batch - b);
    for (int64_t r = 0; r < tq; r += rows) {
      const int64_t nr = std::min(rows, tq - r);
      at::Tensor slab = logits.narrow(0, 0, nb).narrow(1, 0, nr);
      at::bmm_out(slab, qf.narrow(0, b, nb).narrow(1, r, nr), kt.narrow(0, b, nb));
      if (bias.defined()) slab.add_(bias.narrow(0, b, nb));
      at::_softmax_out(slab, slab, -1, false);
      at::Tensor slab_out = out.narrow(0, b, nb).narrow(1, r, nr);
      at::bmm_out(slab_out, slab, vf.narrow(0, b, nb));
    }
  }
  return out.reshape(sized(tq, dv)).to(q.scalar_type());
}

bool fused_attention_available(const at::Device& device) {
#if TORCH_VERSION_MAJOR >= 2
  return device.is_cuda();
#else
  (void)device;
  return false;
#endif
}

at::Tensor attention(const at::Tensor& q, const at::Tensor& k, const at::Tensor& v) {
#if TORCH_VERSION_MAJOR >= 2
  if (q.is_cuda()) return at::scaled_dot_product_attention(q, k, v);
#endif
  return chunked_attention(q, k, v);
}

at::Tensor masked_attention(const at::Tensor& q, const at::Tensor& k, const at::Tensor& v,
                            const at::Tensor& mask) {
#if TORCH_VERSION_MAJOR >= 2
  if (q.is_cuda()) return at::scaled_dot_product_attention(q, k, v, mask);
#endif
  return reference_attention(q, k, v, mask);
}

}  // namespace wc::attention
