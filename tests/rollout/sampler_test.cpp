// The flow-matching schedule, action guidance and the decode stage against their formulas.
#include <gtest/gtest.h>
#include <torch/autograd.h>

#include "engine/core/error.h"
#include "engine/model/dit.h"
#include "engine/rollout/decode.h"
#include "engine/rollout/sampler.h"
#include "tests/model/model_test_util.h"

namespace wc::rollout {
namespace {

TEST(Sampler, ShiftedScheduleMatchesSelfForcing) {
  const std::vector<double> s = flow_schedule(4, 5.0);
  ASSERT_EQ(s.size(), 4u);
  EXPECT_DOUBLE_EQ(s[0], 1.0);
  EXPECT_NEAR(s[1], 0.9375, 1e-12);
  EXPECT_NEAR(s[2], 0.833333333333, 1e-9);
  EXPECT_NEAR(s[3], 0.625, 1e-12);
  const std::vector<double> uniform = flow_schedule(2, 1.0);
  EXPECT_DOUBLE_EQ(uniform[0], 1.0);
  EXPECT_DOUBLE_EQ(uniform[1], 0.5);
}

// One generated block after a committed first block, through a model of `sampler` whose
// weights come from seed 5 (the same weights for every sampler).
at::Tensor guided_block(const model::SamplerConfig& sampler, int64_t action) {
  model::ModelConfig c = testing::tiny_config();
  c.sampler = sampler;
  at::manual_seed(5);
  model::CausalDiT dit(c);
  torch::NoGradGuard no_grad;
  testing::FullHistoryPolicy policy(testing::shape_for(c, c.frame));
  BlockSampler blocks(*dit, policy, c.frame, /*cuda_graphs=*/false);
  at::manual_seed(6);  // fresh random inputs, the same for every sampler
  const at::Tensor first = at::rand({1, 1, 3, 16, 16}) * 2 - 1;
  const at::Tensor noise = at::randn({1, 1, 3, 16, 16});
  const at::Tensor eps = at::randn({1, 1, 3, 16, 16});
  blocks.commit(first, at::zeros({1, 1}, at::kLong), 0, 0, eps);
  return blocks.generate(noise, at::full({1, 1}, action, at::kLong), 1, 1, eps, at::Tensor());
}

// Note [Previous-frame skip] through the sampler: a model whose output head is zero predicts
// "nothing changed", so one step lands on the frame before the block, guided or not; two steps
// land on the posterior mean of the second step, r + k·(x_0.5 − 0.5·r) = r + 0.2·noise (s = 0.5).
TEST(PreviousFrameSkip, AZeroOutputHeadSamplesThePosteriorMean) {
  at::manual_seed(7);  // fresh random inputs
  const at::Tensor first = at::rand({1, 1, 3, 16, 16}) * 2 - 1;
  const at::Tensor noise = at::randn({1, 1, 3, 16, 16});
  const auto sample = [&](int steps, const at::Tensor& reference) {
    model::ModelConfig c = testing::tiny_config();
    c.prediction.previous_frame_skip = true;
    c.prediction.spread = 0.5;
    c.sampler.steps = steps;
    c.sampler.shift = 1.0;  // levels 1, 0.5
    c.sampler.dropped_action = 4;
    c.sampler.action_guidance = 2.0;
    at::manual_seed(5);
    model::CausalDiT dit(c);
    torch::NoGradGuard no_grad;
    dit->head->proj->weight.zero_();
    dit->head->proj->bias.zero_();
    testing::FullHistoryPolicy policy(testing::shape_for(c, c.frame));
    BlockSampler blocks(*dit, policy, c.frame, /*cuda_graphs=*/false);
    blocks.commit(first, at::zeros({1, 1}, at::kLong), 0, 0, at::Tensor());
    return blocks.generate(noise, at::full({1, 1}, 2, at::kLong), 1, 1, at::Tensor(), reference);
  };
  EXPECT_TRUE(at::allclose(sample(1, first), first, 1e-5, 1e-5));
  EXPECT_TRUE(at::allclose(sample(2, first), first + 0.2 * noise, 1e-5, 1e-5));
  EXPECT_THROW(sample(1, at::Tensor()), Error);  // the skip cannot run without its reference
}

// Note [Action guidance] with one Euler step: x0 = noise − v, and v is linear in w, so the
// guided block is the dropped-key block plus w times (keyed − dropped).
TEST(ActionGuidance, OneStepIsTheLinearBlendOfKeyedAndDroppedVelocities) {
  model::SamplerConfig plain;
  plain.steps = 1;
  plain.context_noise = 0.1;
  const at::Tensor keyed = guided_block(plain, 2);
  const at::Tensor dropped = guided_block(plain, 4);
  ASSERT_FALSE(at::allclose(keyed, dropped, 1e-4, 1e-4));  // the key matters to this model
  model::SamplerConfig guided = plain;
  guided.dropped_action = 4;
  for (double w : {0.0, 2.5}) {
    guided.action_guidance = w;
    const at::Tensor out = guided_block(guided, 2);
    EXPECT_TRUE(at::allclose(out, dropped + w * (keyed - dropped), 1e-5, 1e-5)) << w;
  }
  guided.action_guidance = 1.0;  // off, even with the dropped token named
  EXPECT_TRUE(at::equal(guided_block(guided, 2), keyed));
}

// With two steps and guidance on the first only, w = 0 equals sampling the first step under the
// dropped key and the second under the real key: the two differ from both plain runs.
TEST(ActionGuidance, GuidesOnlyTheFirstStepsAsked) {
  model::SamplerConfig plain;
  plain.steps = 2;
  model::SamplerConfig first_only = plain;
  first_only.dropped_action = 4;
  first_only.action_guidance = 0.0;
  first_only.action_guidance_steps = 1;
  model::SamplerConfig every = first_only;
  every.action_guidance_steps = 0;
  const at::Tensor keyed = guided_block(plain, 2);
  const at::Tensor dropped = guided_block(plain, 4);
  EXPECT_TRUE(at::allclose(guided_block(every, 2), dropped, 1e-5, 1e-5));
  const at::Tensor mixed = guided_block(first_only, 2);
  EXPECT_FALSE(at::allclose(mixed, keyed, 1e-4, 1e-4));
  EXPECT_FALSE(at::allclose(mixed, dropped, 1e-4, 1e-4));
}

TEST(Decode, ClampsAndQuantises) {
  const at::Tensor frames = at::tensor({-2.0f, -1.0f, 0.0f, 1.0f, 0.5f, 3.0f}).view({1, 3, 1, 2});
  const at::Tensor rgba = decode_rgba(frames);
  ASSERT_EQ(rgba.sizes(), at::IntArrayRef({1, 1, 2, 4}));
  const uint8_t* p = rgba.data_ptr<uint8_t>();
  // pixel 0: r = -2 -> 0, g = 0 -> 128 (127.5 rounds half to even), b = 0.5 -> 191
  EXPECT_EQ(p[0], 0);
  EXPECT_EQ(p[1], 128);
  EXPECT_EQ(p[2], 191);
  EXPECT_EQ(p[3], 255);
  // pixel 1: r = -1 -> 0, g = 1 -> 255, b = 3 -> 255
  EXPECT_EQ(p[4], 0);
  EXPECT_EQ(p[5], 255);
  EXPECT_EQ(p[6], 255);
  EXPECT_EQ(p[7], 255);
}

TEST(Decode, EncodeDecodeRoundTripsBytes) {
  std::vector<uint8_t> rgba(4 * 3 * 2);
  for (size_t i = 0; i < rgba.size(); ++i) rgba[i] = static_cast<uint8_t>(i * 37 % 256);
  for (size_t i = 3; i < rgba.size(); i += 4) rgba[i] = 255;
  const at::Tensor decoded = decode_rgba(encode_rgba(rgba.data(), 3, 2).unsqueeze(0));
  EXPECT_EQ(std::vector<uint8_t>(decoded.data_ptr<uint8_t>(),
                                 decoded.data_ptr<uint8_t>() + decoded.numel()),
            rgba);
}

}  // namespace
}  // namespace wc::rollout
