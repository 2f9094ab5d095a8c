// HeadCast + TempCache ("combined") on the CPU in float32: with tau = 1 and no budget it equals
// headcast (forced casts in both cell modes, and online classification), compression does bound
// the Global / Spatial stores, and its settings are validated.
#include <ATen/CPUGeneratorImpl.h>
#include <gtest/gtest.h>

#include <vector>

#include "engine/attention/registry.h"
#include "engine/attention/tempcache/combined_policy.h"
#include "engine/core/error.h"
#include "tests/attention/attention_reference.h"
#include "tests/attention/tempcache_reference.h"

namespace wc::attention {
namespace {

using testing::fresh_seed;
using testing::run_block;
using testing::seed_trace;

ModelShape combined_shape() {
  ModelShape shape;
  shape.num_layers = 2;
  shape.num_heads = 4;
  shape.head_dim = 32;
  shape.batch = 2;
  shape.geometry = BlockGeometry{2, 4, 6};
  return shape;
}

TEST(CombinedPolicy, TauOneWithoutBudgetEqualsHeadCast) {
  const uint64_t seed = fresh_seed();
  SCOPED_TRACE(seed_trace(seed));
  at::Generator gen = at::make_generator<at::CPUGeneratorImpl>(seed);
  const ModelShape shape = combined_shape();
  const std::vector<nlohmann::json> variants = {
      {{"window", 6}, {"cell", 2}, {"cast", {{"mix", {1, 1, 1, 1}}}}},
      {{"window", 0}, {"cell", 4}, {"cell_mode", "ragged"}, {"cast", {{"mix", {1, 1, 1, 1}}}}},
      {{"window", 6}, {"cell", 2}, {"classify_block", 2}, {"query_sample", 0}}};
  const auto options = at::TensorOptions().dtype(at::kFloat);
  const int64_t t = shape.geometry.tokens_per_block();
  for (const nlohmann::json& headcast_settings : variants) {
    SCOPED_TRACE(headcast_settings.dump());
    nlohmann::json combined_settings = headcast_settings;
    combined_settings["tau"] = 1.0;
    auto headcast = create_policy("headcast", shape, headcast_settings);
    auto combined = create_policy("combined", shape, combined_settings);
    EXPECT_EQ(combined->name(), "headcast+tempcache");
    for (int64_t block = 0; block < 7; ++block) {
      const at::Tensor q = at::randn({2, 4, t, 32}, gen, options);
      const at::Tensor k = at::randn({2, 4, t, 32}, gen, options);
      const at::Tensor v = at::randn({2, 4, t, 32}, gen, options);
      const at::Tensor a = run_block(*headcast, shape, block, q, k, v);
      const at::Tensor b = run_block(*combined, shape, block, q, k, v);
      EXPECT_LT(testing::max_abs_diff(a, b), 1e-5) << "block " << block;
    }
    const PolicyStats hs = headcast->stats();
    const PolicyStats cs = combined->stats();
    ASSERT_TRUE(cs.classified);
    for (int type = 0; type < kHeadTypeCount; ++type) {
      EXPECT_EQ(hs.per_type[type].heads, cs.per_type[type].heads) << type;
      EXPECT_EQ(hs.per_type[type].cached_tokens, cs.per_type[type].cached_tokens) << type;
      EXPECT_EQ(cs.per_type[type].merges, 0);
    }
    for (int l = 0; l < shape.num_layers; ++l) {
      for (int h = 0; h < shape.num_heads; ++h) {
        EXPECT_EQ(hs.heads[l][h].type, cs.heads[l][h].type);
      }
    }
  }
}

TEST(CombinedPolicy, StaticGlobalAndSpatialHistoryStaysOneFrame) {
  const uint64_t seed = fresh_seed();
  SCOPED_TRACE(seed_trace(seed));
  at::Generator gen = at::make_generator<at::CPUGeneratorImpl>(seed);
  const ModelShape shape = combined_shape();
  auto combined =
      create_policy("combined", shape,
                    {{"window", 0}, {"cell", 2}, {"cast", {{"mix", {1, 1, 1, 1}}}}, {"tau", 0.9}});
  const auto options = at::TensorOptions().dtype(at::kFloat);
  const int64_t n = shape.geometry.tokens_per_frame();
  const at::Tensor frame = at::randn({2, 4, n, 32}, gen, options);
  const at::Tensor k = at::cat({frame, frame}, 2);
  for (int64_t block = 0; block < 5; ++block) {
    const at::Tensor q = at::randn({2, 4, 2 * n, 32}, gen, options);
    run_block(*combined, shape, block, q, k, at::randn({2, 4, 2 * n, 32}, gen, options));
  }
  const PolicyStats stats = combined->stats();
  for (HeadType type : {HeadType::kGlobal, HeadType::kSpatial}) {
    const TypeStats& t = stats.per_type[static_cast<size_t>(type)];
    EXPECT_EQ(t.heads, 2);                      // one per layer
    EXPECT_EQ(t.cached_tokens, 2 * n);          // one frame per head
    EXPECT_DOUBLE_EQ(t.mean_group_size, 10.0);  // 10 frames merged
  }
}

TEST(CombinedPolicy, SettingsAreValidated) {
  const ModelShape shape = combined_shape();
  EXPECT_THROW(create_policy("combined", shape, {{"tua", 1.0}}), Error);
  EXPECT_THROW(create_policy("combined", shape, {{"tau", 2.0}}), Error);
  EXPECT_THROW(create_policy("combined", shape, {{"theta_sink", "x"}}), Error);
  auto policy = create_policy("headcast+tempcache", shape, {{"tau", 0.8}, {"budget", 200}});
  EXPECT_EQ(policy->settings()["tau"], 0.8);
  EXPECT_EQ(policy->settings()["budget"], 200);
  EXPECT_TRUE(policy->settings().contains("theta_dummy"));
}

}  // namespace
}  // namespace wc::attention
