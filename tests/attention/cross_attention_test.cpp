// Cross-attention policies on the CPU in float32 (Note [AnnCA]): the gathered path against the
// masked reference, the keep rule against a loop over buckets, every token kept == dense,
// recall and error on a planted prompt, and the settings' refusals.
#include <ATen/CPUGeneratorImpl.h>
#include <gtest/gtest.h>

#include <cstdio>
#include <vector>

#include "engine/attention/ann/cross_attention_policy.h"
#include "engine/attention/sdpa.h"
#include "engine/attention/tempcache/temp_cache_match.h"
#include "engine/core/error.h"
#include "tests/attention/attention_reference.h"

namespace wc::attention {
namespace {

using testing::fresh_seed;
using testing::max_abs_diff;
using testing::seed_trace;

at::Tensor randn(const std::vector<int64_t>& sizes, at::Generator& gen) {
  return at::randn(sizes, gen, at::TensorOptions().dtype(at::kFloat));
}

TEST(AnnCa, GatheredPathEqualsMaskedReference) {
  const uint64_t seed = fresh_seed();
  SCOPED_TRACE(seed_trace(seed));
  at::Generator gen = at::make_generator<at::CPUGeneratorImpl>(seed);
  const int64_t rows = 3, frames = 3, per_frame = 20, prompt = 70, d = 16;
  const at::Tensor q = randn({rows, frames * per_frame, d}, gen);
  const at::Tensor k = randn({rows, prompt, d}, gen);
  const at::Tensor v = randn({rows, prompt, d}, gen);
  at::Tensor keep = at::rand({rows, frames, prompt}, gen).lt(0.3);
  keep.select(2, 0).fill_(true);  // every frame keeps something
  keep[1][2].fill_(true);         // and one keeps everything
  EXPECT_LT(max_abs_diff(kept_cross_attention(q, k, v, keep),
                         kept_cross_attention_reference(q, k, v, keep)),
            2e-5);
}

TEST(AnnCa, KeepsEveryTokenThatSharesABucketWithAQueryOfTheFrame) {
  const uint64_t seed = fresh_seed();
  SCOPED_TRACE(seed_trace(seed));
  at::Generator gen = at::make_generator<at::CPUGeneratorImpl>(seed);
  const int64_t rows = 2, frames = 2, per_frame = 12, prompt = 40, d = 8;
  const at::Tensor q = randn({rows, frames * per_frame, d}, gen);
  const at::Tensor k = randn({rows, prompt, d}, gen);
  const std::vector<at::Tensor> tables = {lsh_projections(rows, d, 5, 1, at::kCPU),
                                          lsh_projections(rows, d, 5, 2, at::kCPU)};
  const at::Tensor keep = annca_keep(q, k, tables, frames, /*min_kept=*/1);
  int64_t shared = 0;
  for (int64_t r = 0; r < rows; ++r) {
    for (int64_t f = 0; f < frames; ++f) {
      for (int64_t l = 0; l < prompt; ++l) {
        bool any = false;
        for (const at::Tensor& table : tables) {
          const at::Tensor qc = lsh_codes(q, table)[r].narrow(0, f * per_frame, per_frame);
          const int64_t kc = lsh_codes(k, table)[r][l].item<int64_t>();
          any = any || qc.eq(kc).any().item<bool>();
        }
        shared += any;
        if (any) {
          EXPECT_TRUE(keep[r][f][l].item<bool>()) << r << " " << f << " " << l;
        }
      }
    }
  }
  // With min_kept 1, at most one token per frame beyond those sharing a bucket.
  EXPECT_LE(keep.sum().item<int64_t>(), shared + rows * frames);
}

ModelShape cross_shape() {
  ModelShape shape;
  shape.num_layers = 2;
  shape.num_heads = 2;
  shape.head_dim = 16;
  shape.geometry = BlockGeometry{2, 4, 5};
  return shape;
}

TEST(AnnCa, EveryTokenKeptIsDenseCrossAttention) {
  const uint64_t seed = fresh_seed();
  SCOPED_TRACE(seed_trace(seed));
  at::Generator gen = at::make_generator<at::CPUGeneratorImpl>(seed);
  const ModelShape shape = cross_shape();
  auto dense = create_cross_policy("dense", shape, nlohmann::json::object());
  auto annca = create_cross_policy("annca", shape, {{"min_kept", 64}, {"bits", 6}});
  const StepInfo step = testing::step_info(shape, 0, 0, 1, false);
  const at::Tensor q = randn({1, 2, 40, 16}, gen);
  const at::Tensor k = randn({1, 2, 64, 16}, gen), v = randn({1, 2, 64, 16}, gen);
  for (int layer = 0; layer < 2; ++layer) {
    EXPECT_LT(
        max_abs_diff(annca->attend(layer, q, k, v, step), dense->attend(layer, q, k, v, step)),
        2e-5);
  }
  EXPECT_NEAR(annca->stats().kept_share(), 1.0, 1e-12);
  EXPECT_EQ(dense->stats().kept_share(), 1.0);
  EXPECT_GT(dense->stats().prompt_pairs, 0.0);
}

TEST(AnnCa, PlantedPromptKeepsTheTopTokens) {
  // 512 prompt tokens around 16 directions; each frame's queries lie around 2 of them, so a
  // query's true top-16 tokens are its direction's, which the buckets should keep while pruning
  // most of the others.
  const uint64_t seed = fresh_seed();
  SCOPED_TRACE(seed_trace(seed));
  at::Generator gen = at::make_generator<at::CPUGeneratorImpl>(seed);
  const int64_t rows = 2, d = 64, groups = 16, prompt = 512, frames = 3, per_frame = 256, top = 16;
  const at::Tensor centres = randn({rows, groups, d}, gen);
  const at::Tensor token_group = at::arange(prompt, at::kLong).remainder(groups);
  const at::Tensor k = centres.index_select(1, token_group) + randn({rows, prompt, d}, gen) * 0.3;
  const at::Tensor v = randn({rows, prompt, d}, gen);
  std::vector<at::Tensor> frame_queries;
  for (int64_t f = 0; f < frames; ++f) {
    const at::Tensor pick = at::randint(groups, {2}, gen, at::kLong);
    const at::Tensor which = pick.index_select(0, at::randint(2, {per_frame}, gen, at::kLong));
    frame_queries.push_back(centres.index_select(1, which) * 1.5 +
                            randn({rows, per_frame, d}, gen) * 0.3);
  }
  const at::Tensor q = at::cat(frame_queries, 1);
  std::vector<at::Tensor> tables;
  for (int t = 0; t < 2; ++t) tables.push_back(lsh_projections(rows, d, 8, 40 + t, at::kCPU));
  const at::Tensor keep = annca_keep(q, k, tables, frames, 16);
  const at::Tensor mask = keep.unsqueeze(2)
                              .expand({rows, frames, per_frame, prompt})
                              .reshape({rows, frames * per_frame, prompt});
  const at::Tensor best = std::get<1>(at::matmul(q, k.transpose(1, 2)).topk(top, -1));
  const double recall = mask.gather(2, best).to(at::kFloat).mean().item<double>();
  const double kept = keep.to(at::kFloat).mean().item<double>();
  const at::Tensor dense = reference_attention(q, k, v);
  const auto relative = [&](const at::Tensor& x) {
    return (x - dense).norm().item<double>() / dense.norm().item<double>();
  };
  const double error = relative(kept_cross_attention(q, k, v, keep));
  at::Tensor random_keep = at::rand({rows, frames, prompt}, gen).lt(kept);
  random_keep.select(2, 0).fill_(true);
  const double random_error = relative(kept_cross_attention(q, k, v, random_keep));
  std::printf(
      "planted prompt: top-%lld recall %.3f, prompt kept %.3f, relative error %.3f "
      "(%.3f keeping as many tokens at random)\n",
      static_cast<long long>(top), recall, kept, error, random_error);
  EXPECT_GE(recall, 0.9);
  EXPECT_LE(kept, 0.4);
  EXPECT_LT(error, 0.5 * random_error);
}

TEST(AnnCa, SettingsRoundTripAndRefusals) {
  const ModelShape shape = cross_shape();
  auto annca = create_cross_policy("annca", shape, nlohmann::json::object());
  EXPECT_EQ(annca->settings(),
            (nlohmann::json{{"bits", 8}, {"tables", 2}, {"min_kept", 16}, {"seed", 0}}));
  annca->configure({{"bits", 6}, {"tables", 3}});
  EXPECT_EQ(annca->settings().at("tables"), 3);
  const auto refused = [&](const nlohmann::json& bad, const std::string& needle) {
    const nlohmann::json before = annca->settings();
    try {
      annca->configure(bad);
      ADD_FAILURE() << "accepted " << bad.dump();
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find(needle), std::string::npos) << e.what();
    }
    EXPECT_EQ(annca->settings(), before);
  };
  refused({{"bits", 0}}, "'bits': must be in [1, 12]");
  refused({{"tables", 17}}, "'tables': must be in [1, 16]");
  refused({{"min_kept", 0}}, "'min_kept'");
  refused({{"bits", 4}, {"radius", 1}}, "unknown key");
  EXPECT_THROW(create_cross_policy("dense", shape, {{"bits", 4}}), Error);
  EXPECT_THROW(create_cross_policy("sparse", shape, nlohmann::json::object()), Error);
  const StepInfo step = testing::step_info(shape, 0, 0, 1, false);
  const at::Tensor wrong = at::zeros({1, 2, 39, 16});
  const at::Tensor prompt = at::zeros({1, 2, 8, 16});
  EXPECT_THROW(annca->attend(0, wrong, prompt, prompt, step), Error);
  EXPECT_THROW(annca->attend(2, at::zeros({1, 2, 40, 16}), prompt, prompt, step), Error);
}

}  // namespace
}  // namespace wc::attention
