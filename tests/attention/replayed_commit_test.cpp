// Note [Replayed commit]: a policy driven the way a replayed block drives it (commit_host before
// the block's attention, then commits that do their device half only) gives exactly the outputs
// of the same policy driven eagerly, over a rollout long enough to fill, evict and wrap the
// window, with the split taken whenever block_replay_key allows it.
#include <gtest/gtest.h>

#include "engine/attention/registry.h"
#include "tests/attention/attention_reference.h"

namespace wc::attention {
namespace {

using testing::fresh_seed;
using testing::Qkv;

ModelShape replay_shape() {
  ModelShape shape;
  shape.num_layers = 2;
  shape.num_heads = 4;
  shape.head_dim = 8;
  shape.geometry = BlockGeometry{2, 4, 4};
  return shape;
}

// Runs `blocks` blocks through an eager and a split-driven policy; returns how many blocks took
// the split.
int expect_split_matches_eager(const std::string& name, const nlohmann::json& settings, int blocks,
                               uint64_t seed) {
  const ModelShape shape = replay_shape();
  auto eager = create_policy(name, shape, settings);
  auto split = create_policy(name, shape, settings);
  at::Generator gen = at::detail::createCPUGenerator(seed);
  constexpr int kSteps = 2;
  int split_blocks = 0;
  for (int64_t block = 0; block < blocks; ++block) {
    const StepInfo clean = testing::step_info(shape, block, kSteps, kSteps, true);
    const bool replayable = split->block_replay_key(clean).has_value();
    EXPECT_EQ(replayable, eager->block_replay_key(clean).has_value()) << "block " << block;
    if (replayable) {
      split->commit_host(clean);
      ++split_blocks;
    }
    for (int step = 0; step <= kSteps; ++step) {
      StepInfo info = testing::step_info(shape, block, step, kSteps, step == kSteps);
      for (int layer = 0; layer < shape.num_layers; ++layer) {
        const Qkv in = testing::random_qkv(shape, gen);
        const at::Tensor want = eager->attend(layer, in.q, in.k, in.v, info);
        const at::Tensor got = split->attend(layer, in.q, in.k, in.v, info);
        EXPECT_TRUE(at::equal(got, want))
            << name << " block " << block << " step " << step << " layer " << layer;
        if (info.clean_pass) {
          eager->commit(layer, in.k, in.v, info);
          StepInfo device_half = info;
          device_half.commit_device_only = replayable;
          split->commit(layer, in.k, in.v, device_half);
        }
      }
    }
  }
  EXPECT_EQ(split->stats().blocks_committed, eager->stats().blocks_committed);
  EXPECT_EQ(split->stats().total_tokens(), eager->stats().total_tokens());
  return split_blocks;
}

TEST(ReplayedCommit, DenseSplitEqualsEager) {
  const uint64_t seed = fresh_seed();
  SCOPED_TRACE(testing::seed_trace(seed));
  // Window of 8 frames = 4 blocks of 2: full after block 3, then one block leaves per block.
  EXPECT_EQ(expect_split_matches_eager("dense", {{"window", 8}}, 12, seed), 12 - 4);
  // Unbounded: the layout grows, so no block may take the split.
  EXPECT_EQ(expect_split_matches_eager("dense", {{"window", 0}}, 8, seed), 0);
}

TEST(ReplayedCommit, HeadCastSplitEqualsEager) {
  const uint64_t seed = fresh_seed();
  SCOPED_TRACE(testing::seed_trace(seed));
  // A forced cast (one head of each type) from the start; cells of 2x2 tokens.
  const nlohmann::json settings = {{"window", 8}, {"cell", 2}, {"cast", {{"mix", {1, 1, 1, 1}}}}};
  EXPECT_GE(expect_split_matches_eager("headcast", settings, 12, seed), 8);
  // Cast online (classified after its warm-up): no split until the cast is decided.
  const nlohmann::json online = {{"window", 8}, {"cell", 2}, {"query_sample", 0}};
  EXPECT_GE(expect_split_matches_eager("headcast", online, 16, seed), 4);
}

TEST(ReplayedCommit, TempCacheSplitEqualsEager) {
  const uint64_t seed = fresh_seed();
  SCOPED_TRACE(testing::seed_trace(seed));
  // replay_shape(): 16 tokens per frame, 2 frames per block. A budget of 5 frames is reached
  // after block 2; merges (tau 0.3 merges often), evictions and tail moves then run every block.
  for (const char* rule : {"evict_oldest", "merge_closest"}) {
    SCOPED_TRACE(rule);
    const nlohmann::json settings = {{"tau", 0.3}, {"budget", 5 * 16}, {"budget_rule", rule}};
    EXPECT_GE(expect_split_matches_eager("tempcache", settings, 12, seed), 8);
  }
  // A window bounds it too.
  EXPECT_GE(expect_split_matches_eager("tempcache", {{"tau", 0.5}, {"window", 6}}, 12, seed), 8);
  // Unbounded (asked for): the history grows, so no block may take the split.
  EXPECT_EQ(expect_split_matches_eager("tempcache", {{"tau", 0.5}, {"budget", 0}}, 8, seed), 0);
  // No limit given: the default budget (Note [TempCache bounded by default], 7 blocks of 2
  // frames) is reached after block 7, and the blocks after it take the split.
  EXPECT_GE(expect_split_matches_eager("tempcache", {{"tau", 0.5}}, 12, seed), 3);
}

TEST(ReplayedCommit, CombinedSplitEqualsEager) {
  const uint64_t seed = fresh_seed();
  SCOPED_TRACE(testing::seed_trace(seed));
  const nlohmann::json settings = {{"window", 8},
                                   {"cell", 2},
                                   {"cast", {{"mix", {1, 1, 1, 1}}}},
                                   {"tau", 0.3},
                                   {"budget", 5 * 16}};
  EXPECT_GE(expect_split_matches_eager("combined", settings, 12, seed), 8);
}

}  // namespace
}  // namespace wc::attention
