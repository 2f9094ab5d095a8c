// HeadCast's classification scores against a reference written from their definitions alone, on
// fresh random inputs: plain loops in double precision over the keys each restriction allows
// (block 0 and the current block for S_sink, the block before and the current one for S_dummy,
// the (2r+1)² neighbourhood of the query in every slot for the spatial scores), a softmax per
// query row, cosines per row, their mean, minimum and 5th percentile (order statistics
// interpolated, computed here with nth_element), the relative error, and S_sp = P5 − γ·e. Several
// frames per block, a batch of two and history slots that skip blocks, so each restriction is
// read from slot_frames and not from the slot order.
#include <ATen/CPUGeneratorImpl.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <numeric>
#include <random>
#include <string>
#include <vector>

#include "engine/attention/headcast/classify_heads.h"
#include "engine/attention/headcast/head_cast.h"
#include "tests/attention/attention_reference.h"

namespace wc::attention {
namespace {

using testing::fresh_seed;

constexpr int kFrames = 2;  // frames per block
constexpr int kGridH = 5, kGridW = 6;
constexpr int kFrameTokens = kGridH * kGridW;
constexpr int kHeads = 3, kHeadDim = 8, kBatch = 2;
// History frames of blocks 0, 2 and 3, then the current block 4: block 1 was dropped.
const std::vector<int64_t> kSlotFrames = {0, 1, 4, 5, 6, 7, 8, 9};
constexpr int64_t kBlock = 4;

ClassifyInputs random_inputs(at::Generator& gen) {
  ClassifyInputs in;
  in.geometry = BlockGeometry{kFrames, kGridH, kGridW};
  const auto options = at::TensorOptions().dtype(at::kFloat);
  const int64_t keys = static_cast<int64_t>(kSlotFrames.size()) * kFrameTokens;
  // Queries scaled up so the softmax is far from uniform and the restrictions differ.
  in.q = at::randn({kBatch, kHeads, kFrames * kFrameTokens, kHeadDim}, gen, options) * 1.5;
  in.k = at::randn({kBatch, kHeads, keys, kHeadDim}, gen, options);
  in.v = at::randn({kBatch, kHeads, keys, kHeadDim}, gen, options);
  in.slot_frames = kSlotFrames;
  in.block = kBlock;
  return in;
}

using Allowed = std::function<bool(int64_t row, int64_t key)>;

// softmax(q·k/√D) v over the allowed keys of one query row, in double.
std::vector<double> attend(const ClassifyInputs& in, int64_t b, int64_t h, int64_t row,
                           const Allowed& allowed) {
  const auto q = in.q.accessor<float, 4>(), k = in.k.accessor<float, 4>(),
             v = in.v.accessor<float, 4>();
  const int64_t keys = in.k.size(2);
  std::vector<double> logits(static_cast<size_t>(keys), -INFINITY);
  double top = -INFINITY;
  for (int64_t j = 0; j < keys; ++j) {
    if (!allowed(row, j)) continue;
    double dot = 0;
    for (int d = 0; d < kHeadDim; ++d) dot += double{q[b][h][row][d]} * k[b][h][j][d];
    logits[j] = dot / std::sqrt(double{kHeadDim});
    top = std::max(top, logits[j]);
  }
  std::vector<double> out(kHeadDim, 0.0);
  double total = 0;
  for (int64_t j = 0; j < keys; ++j) {
    if (!allowed(row, j)) continue;
    const double w = std::exp(logits[j] - top);
    total += w;
    for (int d = 0; d < kHeadDim; ++d) out[d] += w * v[b][h][j][d];
  }
  for (double& x : out) x /= total;
  return out;
}

double cosine(const std::vector<double>& a, const std::vector<double>& b) {
  const double ab = std::inner_product(a.begin(), a.end(), b.begin(), 0.0);
  const double aa = std::inner_product(a.begin(), a.end(), a.begin(), 0.0);
  const double bb = std::inner_product(b.begin(), b.end(), b.begin(), 0.0);
  return ab / std::sqrt(aa * bb);
}

// The p-quantile with linear interpolation between the order statistics around p·(n−1).
double quantile(std::vector<double> values, double p) {
  const double position = p * static_cast<double>(values.size() - 1);
  const auto lower = static_cast<std::ptrdiff_t>(position);
  std::nth_element(values.begin(), values.begin() + lower, values.end());
  const double below = values[static_cast<size_t>(lower)];
  if (static_cast<size_t>(lower) + 1 == values.size()) return below;
  const double above = *std::min_element(values.begin() + lower + 1, values.end());
  return below + (position - static_cast<double>(lower)) * (above - below);
}

struct Agreement {
  double mean = 0, worst = 0, p5 = 0, error = 0;
};

Agreement agreement(const ClassifyInputs& in, int64_t h, const std::vector<int64_t>& rows,
                    const Allowed& restricted) {
  const Allowed everything = [](int64_t, int64_t) { return true; };
  std::vector<double> cosines;
  double difference = 0, norm = 0;
  for (int64_t b = 0; b < kBatch; ++b) {
    for (int64_t row : rows) {
      const std::vector<double> full = attend(in, b, h, row, everything);
      const std::vector<double> part = attend(in, b, h, row, restricted);
      cosines.push_back(cosine(full, part));
      for (int d = 0; d < kHeadDim; ++d) {
        difference += (full[d] - part[d]) * (full[d] - part[d]);
        norm += full[d] * full[d];
      }
    }
  }
  Agreement a;
  a.mean = std::accumulate(cosines.begin(), cosines.end(), 0.0) / cosines.size();
  a.worst = *std::min_element(cosines.begin(), cosines.end());
  a.p5 = quantile(cosines, 0.05);
  a.error = difference / norm;
  return a;
}

int64_t block_of_key(int64_t key) {
  return kSlotFrames[key / kFrameTokens] / kFrames;
}

bool in_neighbourhood(int64_t row, int64_t key, int radius) {
  const int64_t q = row % kFrameTokens, k = key % kFrameTokens;
  return std::abs(q / kGridW - k / kGridW) <= radius && std::abs(q % kGridW - k % kGridW) <= radius;
}

constexpr double kTolerance = 2e-5;  // float32 attention against double

TEST(ClassifyScores, MatchAReferenceFromTheirDefinitions) {
  for (int radius : {1, 2}) {
    const uint64_t seed = fresh_seed();
    SCOPED_TRACE(testing::seed_trace(seed) + ", radius " + std::to_string(radius));
    at::Generator gen = at::detail::createCPUGenerator(seed);
    const ClassifyInputs in = random_inputs(gen);
    const std::vector<int64_t> rows = sample_query_rows(kFrames * kFrameTokens, 23, seed);
    SpatialProxy proxy;
    proxy.radius = radius;
    const std::vector<HeadEvidence> evidence = classify_heads(in, rows, proxy);
    ASSERT_EQ(evidence.size(), static_cast<size_t>(kHeads));
    for (int64_t h = 0; h < kHeads; ++h) {
      SCOPED_TRACE("head " + std::to_string(h));
      const Agreement sink = agreement(in, h, rows, [](int64_t, int64_t key) {
        return block_of_key(key) == 0 || block_of_key(key) == kBlock;
      });
      const Agreement dummy = agreement(in, h, rows, [](int64_t, int64_t key) {
        return block_of_key(key) == kBlock - 1 || block_of_key(key) == kBlock;
      });
      const Agreement spatial = agreement(in, h, rows, [&](int64_t row, int64_t key) {
        return in_neighbourhood(row, key, radius);
      });
      const HeadEvidence& e = evidence[static_cast<size_t>(h)];
      EXPECT_NEAR(e.sink, sink.mean, kTolerance);
      EXPECT_NEAR(e.sink_worst, sink.worst, kTolerance);
      EXPECT_NEAR(e.dummy, dummy.mean, kTolerance);
      EXPECT_NEAR(e.dummy_worst, dummy.worst, kTolerance);
      EXPECT_NEAR(e.spatial_mean, spatial.mean, kTolerance);
      EXPECT_NEAR(e.spatial_p5, spatial.p5, kTolerance);
      EXPECT_NEAR(e.spatial_worst, spatial.worst, kTolerance);
      EXPECT_NEAR(e.spatial_error, spatial.error, kTolerance);
      // The restrictions are not trivially the whole context on these inputs.
      EXPECT_LT(sink.mean, 0.999);
      EXPECT_LT(spatial.p5, spatial.mean);

      // S_sp = P5 − γ·e, or the worst token's cosine in place of P5 (Note [Worst-token scores]).
      CastThresholds thresholds;
      thresholds.gamma = 3.0;
      const HeadScores paper = head_scores(e, thresholds);
      EXPECT_NEAR(paper.sink, sink.mean, kTolerance);
      EXPECT_NEAR(paper.dummy, dummy.mean, kTolerance);
      EXPECT_NEAR(paper.spatial_mean, spatial.mean, kTolerance);
      EXPECT_NEAR(paper.spatial_score, spatial.p5 - 3.0 * spatial.error, 4 * kTolerance);
      thresholds.worst_token = true;
      const HeadScores worst = head_scores(e, thresholds);
      EXPECT_NEAR(worst.sink, sink.worst, kTolerance);
      EXPECT_NEAR(worst.dummy, dummy.worst, kTolerance);
      EXPECT_NEAR(worst.spatial_score, spatial.worst - 3.0 * spatial.error, 4 * kTolerance);
    }
  }
}

// The percentile classification reads P5 with, on values whose order statistics are known.
TEST(ClassifyScores, PercentileInterpolatesBetweenOrderStatistics) {
  EXPECT_DOUBLE_EQ(percentile({5, 1, 4, 2, 3}, 0.05), 1.2);
  EXPECT_DOUBLE_EQ(percentile({5, 1, 4, 2, 3}, 0.0), 1.0);
  EXPECT_DOUBLE_EQ(percentile({5, 1, 4, 2, 3}, 1.0), 5.0);
  EXPECT_DOUBLE_EQ(percentile({5, 1, 4, 2, 3}, 0.5), 3.0);
  EXPECT_DOUBLE_EQ(percentile({7}, 0.05), 7.0);
  EXPECT_TRUE(std::isnan(percentile({}, 0.05)));
  const uint64_t seed = fresh_seed();
  SCOPED_TRACE(testing::seed_trace(seed));
  std::mt19937_64 rng(seed);
  std::vector<double> values(97);
  for (double& x : values) x = std::uniform_real_distribution<double>(-1, 1)(rng);
  EXPECT_NEAR(percentile(values, 0.05), quantile(values, 0.05), 1e-12);
}

}  // namespace
}  // namespace wc::attention
