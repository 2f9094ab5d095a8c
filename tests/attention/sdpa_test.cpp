// The reference attention against a per-row loop written from the definition, and the chunked CPU
// path (Note [Chunked CPU attention]) against the reference.
#include "engine/attention/sdpa.h"

#include <gtest/gtest.h>

#include <cmath>
#include <optional>
#include <vector>

#include "engine/core/error.h"

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

// Shapes that cut the rows into several slabs (the last one short), the batch into several groups
// of entries, or neither; a key bias, broadcast leading dims and bf16 inputs.
TEST(ChunkedAttention, EqualsReferenceAcrossSlabs) {
  struct Case {
    std::vector<int64_t> q_lead, kv_lead;
    int64_t tq, tk, d, dv;
    bool bias;
    at::ScalarType dtype;
  };
  const std::vector<Case> cases = {
      {{2, 3}, {2, 3}, 9, 12, 16, 16, false, at::kFloat},         // one slab
      {{3}, {3}, 45, 100000, 8, 8, true, at::kFloat},             // rows in slabs of 20, last 5
      {{1, 3}, {1, 3}, 30, 50000, 8, 4, false, at::kFloat},       // one entry at a time
      {{2, 1, 4}, {1, 5, 4}, 7, 900, 16, 16, true, at::kFloat},   // leading dims broadcast
      {{1, 8}, {1, 8}, 256, 8448, 32, 32, false, at::kBFloat16},  // a token frame, 32-frame window
  };
  for (size_t i = 0; i < cases.size(); ++i) {
    const Case& c = cases[i];
    const auto dims = [](std::vector<int64_t> lead, int64_t t, int64_t d) {
      lead.push_back(t);
      lead.push_back(d);
      return lead;
    };
    const at::Tensor q = at::randn(dims(c.q_lead, c.tq, c.d)).to(c.dtype);
    const at::Tensor k = at::randn(dims(c.kv_lead, c.tk, c.d)).to(c.dtype);
    const at::Tensor v = at::randn(dims(c.kv_lead, c.tk, c.dv)).to(c.dtype);
    std::optional<at::Tensor> bias;
    if (c.bias) bias = at::randn(dims(c.kv_lead, 1, c.tk)) * 2;
    const at::Tensor got = chunked_attention(q, k, v, bias, 0.3);
    const at::Tensor want = reference_attention(q, k, v, std::nullopt, bias, 0.3);
    ASSERT_EQ(got.sizes(), want.sizes()) << "case " << i;
    EXPECT_EQ(got.scalar_type(), c.dtype) << "case " << i;
    const double tolerance = c.dtype == at::kFloat ? 1e-5 : 1e-2;
    EXPECT_TRUE(at::allclose(got.to(at::kFloat), want.to(at::kFloat), tolerance, tolerance))
        << "case " << i << ": max diff "
        << (got.to(at::kFloat) - want.to(at::kFloat)).abs().max().item<double>();
  }
}

TEST(ChunkedAttention, RefusesShapesThatDoNotPair) {
  EXPECT_THROW(chunked_attention(at::randn({2, 4, 8}), at::randn({2, 5, 6}), at::randn({2, 5, 6})),
               Error);
  EXPECT_THROW(chunked_attention(at::randn({2, 4, 8}), at::randn({2, 5, 8}), at::randn({2, 6, 8})),
               Error);
  EXPECT_THROW(chunked_attention(at::randn({4, 8}), at::randn({1, 5, 8}), at::randn({1, 5, 8})),
               Error);
}

}  // namespace
}  // namespace wc::attention
