// The `dummy` policy (Dummy Forcing): classification by attention mass, the Dummy count, each
// path against reference attention with the explicit mask, store sizes, settings and reset.
#include "engine/attention/dummy/dummy_policy.h"

#include <gtest/gtest.h>

#include <cmath>
#include <map>
#include <random>
#include <set>

#include "engine/attention/dummy/dummy_head_programming.h"
#include "engine/attention/registry.h"
#include "engine/core/error.h"
#include "tests/attention/dummy_test_util.h"

namespace wc::attention {
namespace {

using testing::head_mask;
using testing::Plant;
using testing::planted_block;
using testing::relative_error;
using testing::Rollout;

ModelShape small_shape(int layers = 2, int heads = 6) {
  ModelShape shape;
  shape.num_layers = layers;
  shape.num_heads = heads;
  shape.head_dim = 16;
  shape.batch = 1;
  shape.geometry = BlockGeometry{3, 3, 4};
  return shape;
}

uint64_t fresh_seed() {
  return std::random_device{}();
}

std::vector<HeadType> layer_types(const PolicyStats& stats, int layer) {
  std::vector<HeadType> types;
  for (const auto& head : stats.heads[static_cast<size_t>(layer)]) types.push_back(head.type);
  return types;
}

int count_type(const PolicyStats& stats, HeadType type) {
  int n = 0;
  for (const auto& layer : stats.heads) {
    for (const auto& head : layer) n += head.type == type;
  }
  return n;
}

// Every non-Dummy head keeps at least as much as any Dummy head would, and Sink iff P0 >= P1.
void expect_rule_holds(const PolicyStats& stats) {
  float max_dummy_cost = -1.0f;
  float min_kept_cost = 2.0f;
  for (const auto& layer : stats.heads) {
    for (const auto& head : layer) {
      const float p0 = head.scores.sink;
      const float p1 = head.scores.dummy;
      ASSERT_FALSE(std::isnan(p0) || std::isnan(p1));
      const float cost = std::max(p0, p1);
      if (head.type == HeadType::kDummy) {
        max_dummy_cost = std::max(max_dummy_cost, cost);
      } else {
        min_kept_cost = std::min(min_kept_cost, cost);
        EXPECT_EQ(head.type, p0 >= p1 ? HeadType::kSink : HeadType::kNeighbour);
      }
    }
  }
  EXPECT_LE(max_dummy_cost, min_kept_cost);
}

// Runs one block through every layer (a denoising pass, then the clean pass and commit per
// layer) with fresh random inputs, checking each output against the masked reference.
void run_checked_block(AttentionPolicy& policy, Rollout& rollout, const ModelShape& shape,
                       int64_t context_blocks, double tolerance = 1e-5) {
  for (bool clean : {false, true}) {
    for (int l = 0; l < shape.num_layers; ++l) {
      const std::vector<int64_t> dims = {shape.batch, shape.num_heads,
                                         shape.geometry.tokens_per_block(), shape.head_dim};
      const at::Tensor q = at::randn(dims);
      const at::Tensor k = at::randn(dims);
      const at::Tensor v = at::randn(dims);
      const auto types = layer_types(policy.stats(), l);
      const at::Tensor got = policy.attend(l, q, k, v, rollout.step(clean));
      const at::Tensor expected = rollout.reference(l, types, q, k, v, context_blocks);
      EXPECT_LT(relative_error(got, expected), tolerance)
          << "block " << rollout.blocks() << " layer " << l << (clean ? " clean" : " noisy");
      if (clean) rollout.commit(l, k, v);
    }
  }
  rollout.next_block();
}

// Blocks 0 and 1 with planted masses; returns after the classifying clean pass and commit.
void run_planted(AttentionPolicy& policy, const ModelShape& shape,
                 const std::vector<std::vector<Plant>>& plants) {
  std::vector<std::vector<at::Tensor>> directions(static_cast<size_t>(shape.num_layers));
  for (auto& layer : directions) {
    for (int h = 0; h < shape.num_heads; ++h) {
      const at::Tensor u = at::randn({shape.head_dim});
      layer.push_back(u / u.norm());
    }
  }
  Rollout rollout(policy, shape);
  for (int64_t block = 0; block < 2; ++block) {
    for (int l = 0; l < shape.num_layers; ++l) {
      at::Tensor q, k, v;
      const auto ul = static_cast<size_t>(l);
      planted_block(block, plants[ul], shape, directions[ul], q, k, v);
      policy.attend(l, q, k, v, rollout.step(false));
      policy.attend(l, q, k, v, rollout.step(true));
      rollout.commit(l, k, v);
    }
    rollout.next_block();
  }
}

TEST(DummyHeadProgramming, NormalisesAcrossHeadsAndPicksSmallestCost) {
  // Sums: p_first 0.8, p_mid 0.65 -> P0 = .625 .125 0 .25, P1 = 0 .4615 .0769 .4615.
  const std::vector<double> first = {0.5, 0.1, 0.0, 0.2};
  const std::vector<double> mid = {0.0, 0.3, 0.05, 0.3};
  const DummyCast one = program_dummy_heads(first, mid, 1);
  EXPECT_EQ(one.types, (std::vector<HeadType>{HeadType::kSink, HeadType::kNeighbour,
                                              HeadType::kDummy, HeadType::kNeighbour}));
  EXPECT_NEAR(one.p_first[0], 0.625, 1e-6);
  EXPECT_NEAR(one.p_mid[1], 0.3 / 0.65, 1e-6);
  // Heads 1 and 3 tie on cost: the lower index becomes Dummy first.
  const DummyCast two = program_dummy_heads(first, mid, 2);
  EXPECT_EQ(two.types, (std::vector<HeadType>{HeadType::kSink, HeadType::kDummy, HeadType::kDummy,
                                              HeadType::kNeighbour}));
  // No mass at all on the neighbour segment (e.g. one frame per block): P1 = 0, never NaN.
  const DummyCast no_mid = program_dummy_heads({0.2, 0.1}, {0.0, 0.0}, 0);
  EXPECT_EQ(no_mid.p_mid[0], 0.0f);
  EXPECT_EQ(no_mid.types[1], HeadType::kSink);
  EXPECT_THROW(program_dummy_heads(first, mid, 5), Error);
}

TEST(DummyHeadProgramming, QueryRowsAreSeededAndInRange) {
  const auto a = sample_query_rows(36, 200, 7, 0);
  EXPECT_EQ(a, sample_query_rows(36, 200, 7, 0));
  EXPECT_NE(a, sample_query_rows(36, 200, 7, 1));
  EXPECT_NE(a, sample_query_rows(36, 200, 8, 0));
  std::set<int64_t> distinct(a.begin(), a.end());
  EXPECT_GT(distinct.size(), 20u);  // uniform over 36 rows, 200 draws
  for (int64_t row : a) {
    EXPECT_GE(row, 0);
    EXPECT_LT(row, 36);
  }
}

TEST(DummyPolicy, PlantedHeadsAreCastByTheirMass) {
  const uint64_t seed = fresh_seed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  at::manual_seed(seed);
  const ModelShape shape = small_shape();
  const std::vector<std::vector<Plant>> plants = {
      {Plant::kFrameZero, Plant::kNeighbour, Plant::kCurrent, Plant::kFrameZero, Plant::kNeighbour,
       Plant::kCurrent},
      {Plant::kCurrent, Plant::kFrameZero, Plant::kNeighbour, Plant::kNeighbour, Plant::kCurrent,
       Plant::kFrameZero}};
  const std::map<Plant, HeadType> expected = {{Plant::kFrameZero, HeadType::kSink},
                                              {Plant::kNeighbour, HeadType::kNeighbour},
                                              {Plant::kCurrent, HeadType::kDummy}};
  auto policy = create_policy("dummy", shape, {{"num_dummy", 4}, {"seed", seed % 1000}});
  run_planted(*policy, shape, plants);
  const PolicyStats stats = policy->stats();
  ASSERT_TRUE(stats.classified);
  for (int l = 0; l < shape.num_layers; ++l) {
    for (int h = 0; h < shape.num_heads; ++h) {
      const auto& head = stats.heads[static_cast<size_t>(l)][static_cast<size_t>(h)];
      const Plant plant = plants[static_cast<size_t>(l)][static_cast<size_t>(h)];
      EXPECT_EQ(head.type, expected.at(plant)) << "layer " << l << " head " << h;
      // Four heads share each segment's mass almost equally.
      if (plant == Plant::kFrameZero) {
        EXPECT_NEAR(head.scores.sink, 0.25, 0.02);
      }
      if (plant == Plant::kNeighbour) {
        EXPECT_NEAR(head.scores.dummy, 0.25, 0.02);
      }
    }
  }
  expect_rule_holds(stats);

  // Two more Dummy heads than planted: the four current-block heads plus the two cheapest others.
  auto wider = create_policy("dummy", shape, {{"num_dummy", 6}});
  run_planted(*wider, shape, plants);
  const PolicyStats wide = wider->stats();
  EXPECT_EQ(count_type(wide, HeadType::kDummy), 6);
  for (int l = 0; l < shape.num_layers; ++l) {
    for (int h = 0; h < shape.num_heads; ++h) {
      if (plants[static_cast<size_t>(l)][static_cast<size_t>(h)] == Plant::kCurrent) {
        EXPECT_EQ(wide.heads[static_cast<size_t>(l)][static_cast<size_t>(h)].type,
                  HeadType::kDummy);
      }
    }
  }
  expect_rule_holds(wide);
}

TEST(DummyPolicy, DummyCountEqualsNumDummy) {
  const uint64_t seed = fresh_seed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  at::manual_seed(seed);
  const ModelShape shape = small_shape(3, 4);
  for (int num_dummy : {0, 1, 5, 6, 12}) {
    SCOPED_TRACE("num_dummy " + std::to_string(num_dummy));
    auto policy = create_policy("dummy", shape, {{"num_dummy", num_dummy}});
    Rollout rollout(*policy, shape);
    run_checked_block(*policy, rollout, shape, 1);
    EXPECT_FALSE(policy->stats().classified);
    run_checked_block(*policy, rollout, shape, 1);
    const PolicyStats stats = policy->stats();
    ASSERT_TRUE(stats.classified);
    EXPECT_EQ(count_type(stats, HeadType::kDummy), num_dummy);
    EXPECT_EQ(stats.per_type[static_cast<size_t>(HeadType::kDummy)].heads, num_dummy);
    expect_rule_holds(stats);
    // The cast paths after classification, including all-Dummy and no-Dummy casts.
    run_checked_block(*policy, rollout, shape, 1);
  }
}

class DummyPathsTest : public ::testing::TestWithParam<int> {};

TEST_P(DummyPathsTest, EveryPassMatchesMaskedReference) {
  const int context_blocks = GetParam();
  const uint64_t seed = fresh_seed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  at::manual_seed(seed);
  const ModelShape shape = small_shape();
  auto policy = create_policy(
      "dummy", shape,
      {{"context_blocks", context_blocks}, {"classify_block", 2}, {"query_sample", 5}});
  Rollout rollout(*policy, shape);
  for (int block = 0; block < 6; ++block) {
    SCOPED_TRACE("block " + std::to_string(block));
    run_checked_block(*policy, rollout, shape, context_blocks);
    EXPECT_EQ(policy->stats().classified, block >= 2);
  }
  const PolicyStats stats = policy->stats();
  EXPECT_EQ(count_type(stats, HeadType::kDummy), 6);  // default: half of 2 x 6
  EXPECT_EQ(count_type(stats, HeadType::kSink) + count_type(stats, HeadType::kNeighbour), 6);
}

INSTANTIATE_TEST_SUITE_P(ContextBlocks, DummyPathsTest, ::testing::Values(1, 2));

TEST(DummyPolicy, ForcedCastAppliesFromTheFirstBlock) {
  const uint64_t seed = fresh_seed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  at::manual_seed(seed);
  const ModelShape shape = small_shape();
  const nlohmann::json layers = {{"neighbour", "sink", "dummy", "dummy", "sink", "neighbour"},
                                 {"S", "S", "S", "D", "N", "N"}};
  for (const nlohmann::json& cast :
       {nlohmann::json{{"mix", {2, 3, 1}}}, nlohmann::json{{"layers", layers}}}) {
    SCOPED_TRACE(cast.dump());
    auto policy = create_policy("dummy", shape, {{"cast", cast}, {"context_blocks", 2}});
    const PolicyStats before = policy->stats();
    EXPECT_TRUE(before.classified);
    if (cast.contains("mix")) {
      EXPECT_EQ(layer_types(before, 1),
                (std::vector<HeadType>{HeadType::kSink, HeadType::kSink, HeadType::kDummy,
                                       HeadType::kDummy, HeadType::kDummy, HeadType::kNeighbour}));
    } else {
      EXPECT_EQ(layer_types(before, 0)[0], HeadType::kNeighbour);
      EXPECT_EQ(layer_types(before, 1)[3], HeadType::kDummy);
    }
    EXPECT_TRUE(std::isnan(before.heads[0][0].scores.sink));
    Rollout rollout(*policy, shape);
    for (int block = 0; block < 4; ++block) run_checked_block(*policy, rollout, shape, 2);
    EXPECT_EQ(policy->settings()["cast"], cast);
  }
}

TEST(DummyPolicy, StoreSizesFollowTheCast) {
  at::manual_seed(5);
  const ModelShape shape = small_shape();
  const int64_t nf = 12;
  const int64_t t = 36;
  const int64_t bytes_per_token = 2 * 16 * 4;  // K and V, head_dim 16, float32
  auto policy = create_policy("dummy", shape, {{"context_blocks", 2}});
  Rollout rollout(*policy, shape);
  EXPECT_EQ(policy->stats().total_tokens(), 0);
  run_checked_block(*policy, rollout, shape, 2);
  // Warm-up, one block: every head holds frame 0 and block 0.
  const TypeStats dense = policy->stats().per_type[static_cast<size_t>(HeadType::kDense)];
  EXPECT_EQ(dense.heads, 12);
  EXPECT_EQ(dense.cached_tokens, 12 * (nf + t));
  EXPECT_EQ(dense.cached_bytes, dense.cached_tokens * bytes_per_token);
  for (int block = 1; block < 4; ++block) run_checked_block(*policy, rollout, shape, 2);
  const PolicyStats stats = policy->stats();
  EXPECT_EQ(stats.blocks_committed, 4);
  const auto& sink = stats.per_type[static_cast<size_t>(HeadType::kSink)];
  const auto& dummy = stats.per_type[static_cast<size_t>(HeadType::kDummy)];
  const auto& neighbour = stats.per_type[static_cast<size_t>(HeadType::kNeighbour)];
  EXPECT_EQ(stats.per_type[static_cast<size_t>(HeadType::kDense)].heads, 0);
  EXPECT_EQ(sink.heads + dummy.heads + neighbour.heads, 12);
  EXPECT_EQ(sink.cached_tokens, sink.heads * nf);
  EXPECT_EQ(dummy.cached_tokens, dummy.heads * nf);
  EXPECT_EQ(neighbour.cached_tokens, neighbour.heads * 2 * t);
  EXPECT_EQ(stats.total_bytes(), stats.total_tokens() * bytes_per_token);
}

TEST(DummyPolicy, PathsAreTimed) {
  struct Recorder : PathTimer {
    std::vector<std::string> begun, ended;
    void begin(const std::string& path) override { begun.push_back(path); }
    void end(const std::string& path) override { ended.push_back(path); }
  };
  at::manual_seed(6);
  const ModelShape shape = small_shape(1, 6);
  Recorder warmup;
  auto online = create_policy("dummy", shape);
  online->set_path_timer(&warmup);
  Rollout rollout(*online, shape);
  run_checked_block(*online, rollout, shape, 1);
  EXPECT_EQ(warmup.begun, (std::vector<std::string>{"dense", "dense"}));
  run_checked_block(*online, rollout, shape, 1);  // classifies on the clean pass
  EXPECT_EQ(warmup.begun,
            (std::vector<std::string>{"dense", "dense", "dense", "classify", "dense"}));
  EXPECT_EQ(warmup.ended.size(), warmup.begun.size());

  Recorder cast;
  auto forced = create_policy("dummy", shape, {{"cast", {{"mix", {2, 2, 2}}}}});
  forced->set_path_timer(&cast);
  Rollout forced_rollout(*forced, shape);
  run_checked_block(*forced, forced_rollout, shape, 1);
  const std::vector<std::string> paths = {"gather", "sink_dummy", "neighbour", "scatter"};
  std::vector<std::string> twice = paths;
  twice.insert(twice.end(), paths.begin(), paths.end());
  EXPECT_EQ(cast.begun, twice);
  EXPECT_EQ(cast.ended, twice);
}

TEST(DummyPolicy, BadSettingsNameTheKey) {
  const ModelShape shape = small_shape();
  const std::vector<std::pair<nlohmann::json, std::string>> cases = {
      {{{"bogus", 1}}, "bogus"},
      {{{"num_dummy", -1}}, "num_dummy"},
      {{{"num_dummy", 13}}, "num_dummy"},
      {{{"num_dummy", 2.5}}, "num_dummy"},
      {{{"num_dummy", "6"}}, "num_dummy"},
      {{{"classify_block", 0}}, "classify_block"},
      {{{"query_sample", -3}}, "query_sample"},
      {{{"context_blocks", 0}}, "context_blocks"},
      {{{"seed", -1}}, "seed"},
      {{{"seed", "x"}}, "seed"},
      {{{"cast", 3}}, "cast"},
      {{{"cast", {{"mix", {2, 2, 1}}}}}, "cast.mix"},
      {{{"cast", {{"mix", {2, 2, 1, 1}}}}}, "cast.mix"},
      {{{"cast", {{"mix", {2, -2, 6}}}}}, "cast.mix"},
      {{{"cast", {{"layers", {{"sink"}}}}}}, "cast.layers"},
      {{{"cast",
         {{"layers",
           {{"sink", "sink", "sink", "sink", "sink", "sink"},
            {"sink", "sink", "spatial", "sink", "sink", "sink"}}}}}},
       "cast.layers[1][2]"},
      {{{"cast", {{"mix", {2, 2, 2}}, {"layers", nullptr}}}}, "cast"},
  };
  for (const auto& [settings, key] : cases) {
    SCOPED_TRACE(settings.dump());
    try {
      create_policy("dummy", shape, settings);
      ADD_FAILURE() << "expected wc::Error";
    } catch (const Error& error) {
      EXPECT_NE(std::string(error.what()).find("'" + key), std::string::npos) << error.what();
    }
  }
  // A rejected configure() changes nothing.
  auto policy = create_policy("dummy", shape, {{"num_dummy", 3}});
  EXPECT_THROW(policy->configure({{"num_dummy", 4}, {"bogus", 1}}), Error);
  EXPECT_EQ(policy->settings()["num_dummy"], 3);
}

TEST(DummyPolicy, DefaultsAndSettingsRoundTrip) {
  const ModelShape shape = small_shape(3, 4);
  auto policy = create_policy("dummy", shape);
  const nlohmann::json settings = policy->settings();
  EXPECT_EQ(settings["num_dummy"], 6);
  EXPECT_EQ(settings["classify_block"], 1);
  EXPECT_EQ(settings["query_sample"], 0);
  EXPECT_EQ(settings["context_blocks"], 1);
  EXPECT_EQ(settings["seed"], 0);
  EXPECT_TRUE(settings["cast"].is_null());
  auto again = create_policy("dummy", shape, settings);
  EXPECT_EQ(again->settings(), settings);
  EXPECT_EQ(policy->name(), "dummy");
}

TEST(DummyPolicy, ResetForgetsHistoryAndCast) {
  const uint64_t seed = fresh_seed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  at::manual_seed(seed);
  const ModelShape shape = small_shape();
  auto policy = create_policy("dummy", shape);
  Rollout first(*policy, shape);
  for (int block = 0; block < 3; ++block) run_checked_block(*policy, first, shape, 1);
  ASSERT_TRUE(policy->stats().classified);
  policy->reset();
  const PolicyStats after = policy->stats();
  EXPECT_FALSE(after.classified);
  EXPECT_EQ(after.blocks_committed, 0);
  EXPECT_EQ(after.total_tokens(), 0);
  EXPECT_EQ(after.heads[0][0].type, HeadType::kDense);
  EXPECT_TRUE(std::isnan(after.heads[0][0].scores.sink));
  // A new rollout behaves as on a fresh policy (warm-up, then a new classification).
  Rollout second(*policy, shape);
  for (int block = 0; block < 3; ++block) run_checked_block(*policy, second, shape, 1);
  EXPECT_TRUE(policy->stats().classified);
  // Changing a structural setting is a reset too; reclassify() restarts warm-up.
  policy->configure({{"num_dummy", 2}});
  EXPECT_FALSE(policy->stats().classified);
  policy->configure({{"num_dummy", 2}, {"seed", 4}});
  Rollout third(*policy, shape);
  for (int block = 0; block < 2; ++block) run_checked_block(*policy, third, shape, 1);
  EXPECT_EQ(count_type(policy->stats(), HeadType::kDummy), 2);
  policy->reclassify();
  EXPECT_FALSE(policy->stats().classified);
  EXPECT_EQ(policy->stats().blocks_committed, 0);
}

TEST(DummyPolicy, RejectsMismatchedInputs) {
  const ModelShape shape = small_shape();
  auto policy = create_policy("dummy", shape);
  const at::Tensor good = at::randn({1, 6, 36, 16});
  Rollout rollout(*policy, shape);
  EXPECT_THROW(policy->attend(2, good, good, good, rollout.step(false)), Error);
  EXPECT_THROW(policy->attend(0, at::randn({1, 6, 35, 16}), good, good, rollout.step(false)),
               Error);
  EXPECT_THROW(policy->attend(0, good.to(at::kDouble), good, good, rollout.step(false)), Error);
}

}  // namespace
}  // namespace wc::attention
