// The dense policy against the naive reference: full softmax over every raw block with an explicit
// mask encoding the sink block and the rolling window.
#include "engine/attention/dense_policy.h"

#include <gtest/gtest.h>

#include "engine/attention/registry.h"
#include "engine/core/error.h"
#include "tests/attention/attention_reference.h"

namespace wc::attention {
namespace {

using testing::fresh_seed;
using testing::Qkv;

ModelShape small_shape(int frames) {
  ModelShape shape;
  shape.num_layers = 2;
  shape.num_heads = 3;
  shape.head_dim = 8;
  shape.batch = 2;
  shape.geometry = BlockGeometry{frames, 3, 4};
  return shape;
}

// Runs `blocks` blocks (2 denoising steps + clean pass each) through `policy` and compares every
// output with the window reference.
void expect_matches_window_reference(AttentionPolicy& policy, const ModelShape& shape,
                                     int64_t window, int blocks, uint64_t seed) {
  at::Generator gen = at::detail::createCPUGenerator(seed);
  std::vector<std::vector<Qkv>> history(static_cast<size_t>(shape.num_layers));
  constexpr int kSteps = 2;
  for (int64_t block = 0; block < blocks; ++block) {
    testing::Visibility vis;
    vis.held.assign(
        static_cast<size_t>(shape.num_heads),
        testing::window_frames(block * shape.geometry.frames, shape.geometry.frames, window));
    for (int step = 0; step <= kSteps; ++step) {
      const bool clean = step == kSteps;
      const StepInfo info = testing::step_info(shape, block, step, kSteps, clean);
      for (int layer = 0; layer < shape.num_layers; ++layer) {
        const Qkv in = testing::random_qkv(shape, gen);
        const at::Tensor out = policy.attend(layer, in.q, in.k, in.v, info);
        const at::Tensor expected =
            testing::masked_reference(shape, history[static_cast<size_t>(layer)], in, block, vis);
        ASSERT_LT(testing::max_abs_diff(out, expected), 1e-5)
            << "block " << block << " step " << step << " layer " << layer;
        if (clean) {
          policy.commit(layer, in.k, in.v, info);
          history[static_cast<size_t>(layer)].push_back(in);
        }
      }
    }
  }
}

TEST(DensePolicy, MatchesWindowReferenceOverRollout) {
  const uint64_t seed = fresh_seed();
  SCOPED_TRACE(testing::seed_trace(seed));
  const ModelShape shape = small_shape(2);
  // Sink block (2 frames) + 4 rolling frames; 7 blocks so the ring wraps twice.
  auto policy = create_policy("dense", shape, {{"window", 6}});
  expect_matches_window_reference(*policy, shape, 6, 7, seed);
  EXPECT_EQ(policy->stats().per_type[static_cast<size_t>(HeadType::kDense)].cached_tokens,
            shape.num_layers * shape.num_heads * 6 * shape.geometry.tokens_per_frame());
}

TEST(DensePolicy, WindowNotAMultipleOfTheBlock) {
  const uint64_t seed = fresh_seed();
  SCOPED_TRACE(testing::seed_trace(seed));
  const ModelShape shape = small_shape(2);
  auto policy = create_policy("dense", shape, {{"window", 7}});  // sink 2 + 5 rolling frames
  expect_matches_window_reference(*policy, shape, 7, 6, seed);
}

TEST(DensePolicy, UnboundedWindowGrowsPastItsInitialCapacity) {
  const uint64_t seed = fresh_seed();
  SCOPED_TRACE(testing::seed_trace(seed));
  const ModelShape shape = small_shape(1);
  auto policy = create_policy("dense", shape, {{"window", 0}});
  expect_matches_window_reference(*policy, shape, 0, 11, seed);  // initial capacity is 8 frames
}

TEST(DensePolicy, DefaultWindowIsSevenBlocks) {
  const ModelShape shape = small_shape(3);
  auto policy = create_policy("dense", shape);
  EXPECT_EQ(policy->settings()["window"], 21);
}

TEST(DensePolicy, ShrinkingTheWindowDropsOldFrames) {
  const uint64_t seed = fresh_seed();
  SCOPED_TRACE(testing::seed_trace(seed));
  const ModelShape shape = small_shape(1);
  auto policy = create_policy("dense", shape, {{"window", 0}});
  at::Generator gen = at::detail::createCPUGenerator(seed);
  std::vector<std::vector<Qkv>> history(static_cast<size_t>(shape.num_layers));
  for (int64_t block = 0; block < 6; ++block) {
    const StepInfo info = testing::step_info(shape, block, 1, 1, true);
    for (int layer = 0; layer < shape.num_layers; ++layer) {
      const Qkv in = testing::random_qkv(shape, gen);
      policy->attend(layer, in.q, in.k, in.v, info);
      policy->commit(layer, in.k, in.v, info);
      history[static_cast<size_t>(layer)].push_back(in);
    }
  }
  policy->configure({{"window", 3}});  // keeps frame 0 and frames 4, 5
  testing::Visibility vis;
  vis.held.assign(static_cast<size_t>(shape.num_heads), std::set<int64_t>{0, 4, 5});
  const StepInfo info = testing::step_info(shape, 6, 0, 1, false);
  const Qkv in = testing::random_qkv(shape, gen);
  const at::Tensor out = policy->attend(0, in.q, in.k, in.v, info);
  EXPECT_LT(testing::max_abs_diff(out, testing::masked_reference(shape, history[0], in, 6, vis)),
            1e-5);
}

TEST(DensePolicy, BadSettingsNameTheKey) {
  const ModelShape shape = small_shape(2);
  for (const auto& [settings, key] :
       std::vector<std::pair<nlohmann::json, std::string>>{{{{"window", -1}}, "window"},
                                                           {{{"window", 1}}, "window"},
                                                           {{{"window", "7"}}, "window"},
                                                           {{{"windw", 7}}, "windw"}}) {
    try {
      create_policy("dense", shape, settings);
      ADD_FAILURE() << "accepted " << settings.dump();
    } catch (const Error& error) {
      EXPECT_NE(std::string(error.what()).find("'" + key + "'"), std::string::npos) << error.what();
    }
  }
}

TEST(DensePolicy, RejectsWrongShapes) {
  const ModelShape shape = small_shape(2);
  auto policy = create_policy("dense", shape);
  const at::Tensor bad = at::zeros({1, 3, 24, 8});
  EXPECT_THROW(policy->attend(0, bad, bad, bad, testing::step_info(shape, 0, 0, 1, false)), Error);
  const at::Tensor wrong_dtype = at::zeros({2, 3, 24, 8}, at::kDouble);
  EXPECT_THROW(policy->attend(0, wrong_dtype, wrong_dtype, wrong_dtype,
                              testing::step_info(shape, 0, 0, 1, false)),
               Error);
  const at::Tensor good = at::zeros({2, 3, 24, 8});
  EXPECT_THROW(policy->attend(2, good, good, good, testing::step_info(shape, 0, 0, 1, false)),
               Error);
}

// Note [Replayed attention]: the key changes while the window fills, then holds; a new window
// (new stores) changes it.
TEST(DensePolicy, ReplayKeyHoldsOnceTheWindowIsFull) {
  const ModelShape shape = small_shape(1);
  auto policy = create_policy("dense", shape, {{"window", 3}});
  at::Generator gen = at::detail::createCPUGenerator(5);
  std::vector<std::optional<uint64_t>> keys;
  for (int64_t block = 0; block < 6; ++block) {
    keys.push_back(policy->attend_replay_key());
    const StepInfo info = testing::step_info(shape, block, 0, 1, true);
    for (int layer = 0; layer < shape.num_layers; ++layer) {
      const Qkv in = testing::random_qkv(shape, gen);
      policy->attend(layer, in.q, in.k, in.v, info);
      policy->commit(layer, in.k, in.v, info);
    }
  }
  for (const auto& key : keys) ASSERT_TRUE(key.has_value());
  EXPECT_NE(keys[0], keys[1]);
  EXPECT_NE(keys[2], keys[3]);
  EXPECT_EQ(keys[3], keys[4]);  // 3 frames held from block 3 on
  EXPECT_EQ(keys[4], keys[5]);
  policy->configure({{"window", 2}});
  EXPECT_NE(policy->attend_replay_key(), keys[5]);
}

}  // namespace
}  // namespace wc::attention
