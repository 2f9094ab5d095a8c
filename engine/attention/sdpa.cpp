// See sdpa.h. Version differences live here and nowhere else.
#include "engine/attention/sdpa.h"

#include <torch/version.h>

#include <cmath>

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
  // Unfused: the scale multiplies q (Tq·D values) rather than the logits (Tq·Tk values, 40×
  // more for a game-small frame against its window), which is 4 % of a CPU frame.
  const at::Tensor qf = q.to(at::kFloat) * (1.0 / std::sqrt(static_cast<double>(q.size(-1))));
  const at::Tensor logits = at::matmul(qf, k.to(at::kFloat).transpose(-2, -1));
  return at::matmul(at::softmax(logits, -1), v.to(at::kFloat)).to(q.scalar_type());
}

at::Tensor masked_attention(const at::Tensor& q, const at::Tensor& k, const at::Tensor& v,
                            const at::Tensor& mask) {
#if TORCH_VERSION_MAJOR >= 2
  if (q.is_cuda()) return at::scaled_dot_product_attention(q, k, v, mask);
#endif
  return reference_attention(q, k, v, mask);
}

}  // namespace wc::attention
