// The DiT: the attention block against a hand-written computation, the cached block-by-block
// rollout against the masked training forward, parameter names against the tensor spec.
#include <gtest/gtest.h>

#include <torch/autograd.h>

#include <algorithm>
#include <cmath>
#include <complex>

#include "engine/attention/registry.h"
#include "engine/attention/sdpa.h"
#include "engine/model/dit.h"
#include "engine/model/weights.h"
#include "tests/model/model_test_util.h"

namespace wc::model {
namespace {

at::Tensor linear(const at::Tensor& x, const torch::nn::Linear& l) {
  return at::matmul(x, l->weight.t()) + l->bias;
}

TEST(DiT, ParametersMatchTensorSpecs) {
  const ModelConfig c = testing::tiny_config();
  CausalDiT dit(c);
  const std::vector<TensorSpec> specs = model_tensor_specs(c, Dtype::kF32);
  const auto params = dit->named_parameters();
  ASSERT_EQ(params.size(), specs.size());
  size_t i = 0;
  for (const auto& item : params) {
    EXPECT_EQ(item.key(), specs[i].name);
    EXPECT_EQ(item.value().sizes().vec(), specs[i].shape) << specs[i].name;
    ++i;
  }
}

TEST(DiT, AttentionBlockMatchesHandWrittenAttention) {
  const ModelConfig c = testing::tiny_config();
  at::manual_seed(11);
  SelfAttention attn(c);
  {
    torch::NoGradGuard no_grad;
    attn->norm_q->weight.copy_(1 + 0.1 * at::randn({c.hidden}));
    attn->norm_k->weight.copy_(1 + 0.1 * at::randn({c.hidden}));
  }
  const int frames = 2, gh = 2, gw = 3, t = frames * gh * gw;
  const at::Tensor x = at::randn({1, t, c.hidden});
  const RopeTable rope = rope_table(4, frames, gh, gw, c.head_dim, c.rope_theta);
  torch::NoGradGuard no_grad;
  const at::Tensor out =
      attn->forward(x, rope_rotation(rope, x.device(), x.scalar_type()), 0,
                    [](int, const at::Tensor& q, const at::Tensor& k, const at::Tensor& v) {
                      return attention::reference_attention(q, k, v);
                    });

  // By hand, in double: projections, RMS norm over the hidden size, per-head RoPE as complex
  // rotations, softmax(q kᵀ / √d) v, output projection.
  const at::Tensor xd = x.to(at::kDouble)[0];
  const auto rms = [&](const at::Tensor& y, const at::Tensor& w) {
    return y / at::sqrt(y.pow(2).mean(-1, true) + c.norm_eps) * w.to(at::kDouble);
  };
  const auto lin = [&](const torch::nn::Linear& l) {
    return at::matmul(xd, l->weight.to(at::kDouble).t()) + l->bias.to(at::kDouble);
  };
  const at::Tensor q = rms(lin(attn->q), attn->norm_q->weight);
  const at::Tensor k = rms(lin(attn->k), attn->norm_k->weight);
  const at::Tensor v = lin(attn->v);
  const RopeSplit split = rope_split(c.head_dim);
  const auto rotate = [&](at::Tensor y) {  // [T, D] of one head
    y = y.clone();
    for (int token = 0; token < t; ++token) {
      const int f = token / (gh * gw), row = (token / gw) % gh, col = token % gw;
      for (int p = 0; p < c.head_dim / 2; ++p) {
        double pos, freq;
        if (p < split.time) {
          pos = 4 + f, freq = std::pow(c.rope_theta, -2.0 * p / (2.0 * split.time));
        } else if (p < split.time + split.row) {
          pos = row, freq = std::pow(c.rope_theta, -2.0 * (p - split.time) / (2.0 * split.row));
        } else {
          pos = col,
          freq = std::pow(c.rope_theta, -2.0 * (p - split.time - split.row) / (2.0 * split.column));
        }
        const std::complex<double> z(y[token][2 * p].item<double>(),
                                     y[token][2 * p + 1].item<double>());
        const std::complex<double> r = z * std::polar(1.0, pos * freq);
        y[token][2 * p] = r.real();
        y[token][2 * p + 1] = r.imag();
      }
    }
    return y;
  };
  std::vector<at::Tensor> heads;
  for (int h = 0; h < c.heads; ++h) {
    const auto part = [&](const at::Tensor& y) {
      return y.narrow(1, int64_t{h} * c.head_dim, c.head_dim);
    };
    const at::Tensor qh = rotate(part(q)), kh = rotate(part(k)), vh = part(v);
    const at::Tensor weights =
        at::softmax(at::matmul(qh, kh.t()) / std::sqrt(double(c.head_dim)), -1);
    heads.push_back(at::matmul(weights, vh));
  }
  const at::Tensor expected = at::matmul(at::cat(heads, 1), attn->o->weight.to(at::kDouble).t()) +
                              attn->o->bias.to(at::kDouble);
  EXPECT_TRUE(at::allclose(out[0].to(at::kDouble), expected, 1e-4, 1e-5))
      << (out[0].to(at::kDouble) - expected).abs().max().item<double>();
}

TEST(DiT, BlockAppliesAdaLnPerFrame) {
  const ModelConfig c = testing::tiny_config();
  at::manual_seed(12);
  DiTBlock block(c);
  const int frames = 2, n = 4;
  const at::Tensor x = at::randn({1, frames * n, c.hidden});
  const at::Tensor cond = at::randn({1, frames, 6, c.hidden});
  const RopeTable rope = rope_table(0, frames, 2, 2, c.head_dim, c.rope_theta);
  const AttendFn attend = [](int, const at::Tensor& q, const at::Tensor& k, const at::Tensor& v) {
    return attention::reference_attention(q, k, v);
  };
  torch::NoGradGuard no_grad;
  const RopeRotation rotation = rope_rotation(rope, x.device(), x.scalar_type());
  const at::Tensor out = block->forward(x, cond, rotation, 0, attend);
  // The same block by hand: per-frame vectors broadcast by explicit repetition.
  const at::Tensor mod = cond + block->modulation.unsqueeze(0);
  const auto per_token = [&](int i) {  // [1, F·N, D]
    return mod.select(2, i).repeat_interleave(n, 1);
  };
  const auto ln = [&](const at::Tensor& y) {
    const at::Tensor mean = y.mean(-1, true);
    return (y - mean) / at::sqrt((y - mean).pow(2).mean(-1, true) + c.norm_eps);
  };
  const at::Tensor a_in = ln(x) * (1 + per_token(1)) + per_token(0);
  const at::Tensor h = x + per_token(2) * block->attn->forward(a_in, rotation, 0, attend);
  const at::Tensor m_in = ln(h) * (1 + per_token(4)) + per_token(3);
  const at::Tensor hidden = at::gelu(linear(m_in, block->mlp->fc1), "tanh");
  const at::Tensor expected = h + per_token(5) * linear(hidden, block->mlp->fc2);
  EXPECT_TRUE(at::allclose(out, expected, 1e-4, 1e-5));
}

// The rollout a Session performs (each block: a forward at its noise level, then the clean pass
// committing K/V) equals one masked training forward over the clip with history at t = 0.
void expect_cached_equals_training(const std::string& policy_name, const nlohmann::json& settings,
                                   int frames_per_block) {
  testing::register_full_history_policy();
  const ModelConfig c = testing::tiny_config(frames_per_block);
  CausalDiT dit(c);
  init_random_weights(dit, 21);
  const int blocks = 3, frames = blocks * frames_per_block;
  at::manual_seed(22);
  const at::Tensor clip = at::randn({1, frames, 3, 16, 16});
  const at::Tensor actions = at::randint(c.num_actions, {1, frames}, at::kLong);
  const double t_last = 0.6;

  auto policy = attention::create_policy(policy_name, testing::shape_for(c, c.frame), settings);
  torch::NoGradGuard no_grad;
  std::vector<at::Tensor> cached;
  for (int b = 0; b < blocks; ++b) {
    const int64_t start = int64_t{b} * frames_per_block;
    const double t = b + 1 == blocks ? t_last : 0.0;
    FrameBatch batch{clip.narrow(1, start, frames_per_block), at::full({1, frames_per_block}, t),
                     actions.narrow(1, start, frames_per_block), start, at::Tensor()};
    attention::StepInfo step;
    step.block_index = b;
    step.noise_level = t;
    step.geometry = {frames_per_block, 4, 4};
    cached.push_back(dit->forward_block(batch, *policy, step));
    step.clean_pass = true;
    step.noise_level = 0.0;
    step.denoise_step = 1;
    batch.t = at::zeros({1, frames_per_block});
    EXPECT_FALSE(dit->forward_block(batch, *policy, step).defined());
  }
  at::Tensor levels = at::zeros({1, frames});
  levels.narrow(1, frames - frames_per_block, frames_per_block).fill_(t_last);
  const at::Tensor trained = dit->forward_train({clip, levels, actions, 0});
  ASSERT_EQ(trained.sizes(), clip.sizes());
  const at::Tensor rolled = at::cat(cached, 1);
  EXPECT_TRUE(at::allclose(rolled, trained, 1e-4, 1e-5))
      << policy_name << ": max diff " << (rolled - trained).abs().max().item<double>();
  // Not trivially equal: the history changes the last block's prediction.
  const at::Tensor alone = dit->forward_train(
      {clip.narrow(1, frames - frames_per_block, frames_per_block),
       at::full({1, frames_per_block}, t_last),
       actions.narrow(1, frames - frames_per_block, frames_per_block), frames - frames_per_block});
  EXPECT_FALSE(at::allclose(alone, cached.back(), 1e-3, 1e-3));
}

TEST(DiT, CachedRolloutEqualsTrainingForwardFullHistory) {
  expect_cached_equals_training("test_full_history", nlohmann::json::object(), 1);
  expect_cached_equals_training("test_full_history", nlohmann::json::object(), 2);
}

TEST(DiT, CachedRolloutEqualsTrainingForwardDensePolicy) {
  const auto names = attention::policy_names();
  if (std::find(names.begin(), names.end(), "dense") == names.end()) {
    GTEST_SKIP() << "the dense policy is not registered in this build";
  }
  expect_cached_equals_training("dense", {{"window", 0}}, 1);
  expect_cached_equals_training("dense", {{"window", 0}}, 2);
}

// Note [Head order]: HeadCast with a Spatial head whose cell is the whole frame and a Global head
// sees what dense attention sees; the policy groups them in type order (Spatial first), so the
// model runs the layer through permuted projections. The rollout still equals the training
// forward, and grouping off gives the same frames.
TEST(DiT, GroupedHeadsEqualTheTrainingForward) {
  nlohmann::json layers = nlohmann::json::array();
  layers.push_back(nlohmann::json::array({"global", "spatial"}));
  layers.push_back(nlohmann::json::array({"spatial", "global"}));
  const nlohmann::json settings = {{"window", 0}, {"cell", 4}, {"cast", {{"layers", layers}}}};
  expect_cached_equals_training("headcast", settings, 1);
  expect_cached_equals_training("headcast", settings, 2);
  const ModelConfig c = testing::tiny_config();
  auto policy = attention::create_policy("headcast", testing::shape_for(c, c.frame), settings);
  ASSERT_NE(policy->head_order(0), nullptr);
  EXPECT_EQ(*policy->head_order(0), (std::vector<int>{1, 0}));  // Spatial, then Global
  EXPECT_EQ(*policy->head_order(1), (std::vector<int>{0, 1}));

  CausalDiT dit(c);
  init_random_weights(dit, 5);
  at::manual_seed(6);
  const at::Tensor frames = at::randn({1, 1, 3, 16, 16});
  const at::Tensor actions = at::randint(c.num_actions, {1, 1}, at::kLong);
  torch::NoGradGuard no_grad;
  std::vector<at::Tensor> outputs;
  for (bool grouping : {true, false}) {
    dit->set_head_grouping(grouping);
    auto p = attention::create_policy("headcast", testing::shape_for(c, c.frame), settings);
    at::Tensor last;
    for (int b = 0; b < 3; ++b) {
      FrameBatch batch{frames, at::full({1, 1}, 0.5), actions, b, at::Tensor()};
      attention::StepInfo step;
      step.block_index = b;
      step.geometry = {1, 4, 4};
      last = dit->forward_block(batch, *p, step);
      step.clean_pass = true;
      batch.t = at::zeros({1, 1});
      dit->forward_block(batch, *p, step);
    }
    outputs.push_back(last);
  }
  EXPECT_TRUE(at::allclose(outputs[0], outputs[1], 1e-5, 1e-6))
      << "max diff " << (outputs[0] - outputs[1]).abs().max().item<double>();
}

TEST(DiT, TrainingForwardIsDifferentiable) {
  const ModelConfig c = testing::tiny_config(2);
  CausalDiT dit(c);
  init_random_weights(dit, 3);
  at::manual_seed(4);
  const at::Tensor clip = at::randn({2, 4, 3, 16, 16});
  const at::Tensor t = at::rand({2, 4});
  const at::Tensor actions = at::randint(c.num_actions, {2, 4}, at::kLong);
  const at::Tensor loss = dit->forward_train({clip, t, actions, 0}).pow(2).mean();
  loss.backward();
  for (const auto& item : dit->named_parameters()) {
    ASSERT_TRUE(item.value().grad().defined()) << item.key();
    EXPECT_GT(item.value().grad().abs().sum().item<double>(), 0.0) << item.key();
  }
}

TEST(DiT, ActionsChangeThePrediction) {
  const ModelConfig c = testing::tiny_config();
  CausalDiT dit(c);
  init_random_weights(dit, 5);
  torch::NoGradGuard no_grad;
  const at::Tensor frame = at::randn({1, 1, 3, 16, 16});
  const at::Tensor t = at::full({1, 1}, 0.5);
  const at::Tensor up = dit->forward_train({frame, t, at::full({1, 1}, 1, at::kLong), 0});
  const at::Tensor left = dit->forward_train({frame, t, at::full({1, 1}, 3, at::kLong), 0});
  EXPECT_FALSE(at::allclose(up, left, 1e-3, 1e-3));
}

TEST(DiT, RandomInitIsDeterministic) {
  const ModelConfig c = testing::tiny_config();
  CausalDiT a(c), b(c), other(c);
  init_random_weights(a, 9);
  init_random_weights(b, 9);
  init_random_weights(other, 10);
  const auto pa = a->parameters(), pb = b->parameters(), po = other->parameters();
  bool any_differs = false;
  for (size_t i = 0; i < pa.size(); ++i) {
    EXPECT_TRUE(at::equal(pa[i], pb[i]));
    any_differs = any_differs || !at::equal(pa[i], po[i]);
  }
  EXPECT_TRUE(any_differs);
}

}  // namespace
}  // namespace wc::model
