// The reference attention against a per-row loop written from the definition.
#include "engine/attention/sdpa.h"

#include <gtest/gtest.h>

#include <cmath>

namespace wc::attention {
namespace {

at::Tensor naive_attention(const at::Tensor& q, const at::Tensor& k, const at::Tensor& v,
                           const at::Tensor& bias) {
  const int64_t tq = q.size(0);
  const int64_t tk = k.size(0);
  at::Tensor out = at::zeros({tq, v.size(1)}, at::kDouble);
  const double scale = 1.0 / std::sqrt(static_cast<double>(q.size(1)));
  for (int64_t i = 0; i < tq; ++i) {
    std::vector<double> logits(tk);
    double max_logit = -1e300;
    for (int64_t j = 0; j < tk; ++j) {
      logits[j] = (q[i] * k[j]).sum().item<double>() * scale + bias[j].item<double>();
      max_logit = std::max(max_logit, logits[j]);
    }
    double total = 0;
    for (auto& l : logits) total += (l = std::exp(l - max_logit));
    for (int64_t j = 0; j < tk; ++j) out[i] += v[j] * (logits[j] / total);
  }
  return out;
}

TEST(ReferenceAttention, MatchesDefinitionWithKeyBias) {
  at::manual_seed(11);
  const auto q = at::randn({5, 8}, at::kDouble);
  const auto k = at::randn({7, 8}, at::kDouble);
  const auto v = at::randn({7, 4}, at::kDouble);
  const auto bias = at::randn({7}, at::kDouble);
  const auto expected = naive_attention(q, k, v, bias);
  const auto got = reference_attention(q.to(at::kFloat), k.to(at::kFloat), v.to(at::kFloat),
                                       std::nullopt, bias.to(at::kFloat));
  EXPECT_TRUE(at::allclose(got.to(at::kDouble), expected, 1e-5, 1e-5));
}

TEST(ReferenceAttention, MaskExcludesKeys) {
  at::manual_seed(12);
  const auto q = at::randn({1, 2, 4, 8});
  const auto k = at::randn({1, 2, 6, 8});
  const auto v = at::randn({1, 2, 6, 8});
  auto mask = at::ones({4, 6}, at::kBool);
  mask.slice(1, 3, 6).fill_(false);
  const auto masked = reference_attention(q, k, v, mask);
  const auto truncated = reference_attention(q, k.slice(2, 0, 3), v.slice(2, 0, 3));
  EXPECT_TRUE(at::allclose(masked, truncated, 1e-6, 1e-6));
}

TEST(Attention, EqualsReferenceOnThisDevice) {
  at::manual_seed(13);
  const auto q = at::randn({2, 3, 9, 16});
  const auto k = at::randn({2, 3, 12, 16});
  const auto v = at::randn({2, 3, 12, 16});
  EXPECT_TRUE(at::allclose(attention(q, k, v), reference_attention(q, k, v), 1e-5, 1e-5));
}

}  // namespace
}  // namespace wc::attention
