// The DiT on CUDA in bfloat16 against the CPU float32 reference (skipped without CUDA).
#include <gtest/gtest.h>
#include <torch/autograd.h>
#include <torch/cuda.h>

#include <string>
#include <utility>
#include <vector>

#include "engine/attention/registry.h"
#include "engine/model/dit.h"
#include "engine/model/model_config.h"
#include "engine/model/weights.h"
#include "engine/rollout/sampler.h"
#include "engine/rollout/session.h"

namespace wc::model {
namespace {

ModelConfig small_config(int frames_per_block) {
  ModelConfig c;
  c.name = "gpu-small";
  c.channels = 3;
  c.frame = {32, 32};
  c.patch_h = 4;
  c.patch_w = 4;
  c.frames_per_block = frames_per_block;
  c.hidden = 128;
  c.layers = 3;
  c.heads = 2;
  c.head_dim = 64;
  c.mlp = 256;
  c.freq_dim = 64;
  c.sampler.steps = 3;
  return c;
}

double relative_error(const at::Tensor& a, const at::Tensor& b) {
  const at::Tensor fa = a.to(at::kCPU, at::kFloat), fb = b.to(at::kCPU, at::kFloat);
  return ((fa - fb).norm() / fb.norm()).item<double>();
}

#define REQUIRE_CUDA()                                                                     \
  if (!torch::cuda::is_available()) {                                                      \
    GTEST_SKIP() << "no CUDA device in this build or on this machine (CPU-only LibTorch)"; \
  }

TEST(ModelGpu, Bf16TrainingForwardMatchesCpuFloat) {
  REQUIRE_CUDA();
  const ModelConfig c = small_config(2);
  CausalDiT cpu(c), gpu(c);
  init_random_weights(cpu, 1);
  init_random_weights(gpu, 1);
  gpu->to(at::kCUDA, at::kBFloat16);
  at::manual_seed(2);
  const at::Tensor clip = at::randn({1, 6, 3, 32, 32});
  const at::Tensor t = at::rand({1, 6});
  const at::Tensor actions = at::randint(c.num_actions, {1, 6}, at::kLong);
  torch::NoGradGuard no_grad;
  const at::Tensor expected = cpu->forward_train({clip, t, actions, 0, at::Tensor()});
  const at::Tensor got =
      gpu->forward_train({clip.cuda(), t.cuda(), actions.cuda(), 0, at::Tensor()});
  EXPECT_EQ(got.scalar_type(), at::kBFloat16);
  EXPECT_LT(relative_error(got, expected), 3e-2);
}

TEST(ModelGpu, Bf16DenseRolloutMatchesCpuFloat) {
  REQUIRE_CUDA();
  const ModelConfig c = small_config(1);
  const auto run = [&](at::Device device, at::ScalarType dtype) {
    CausalDiT dit(c);
    init_random_weights(dit, 3);
    dit->to(device, dtype);
    attention::ModelShape shape;
    shape.num_layers = c.layers;
    shape.num_heads = c.heads;
    shape.head_dim = c.head_dim;
    shape.geometry = {1, 8, 8};
    shape.device = device;
    shape.dtype = dtype;
    auto policy = attention::create_policy("dense", shape, {{"window", 0}});
    rollout::BlockSampler sampler(*dit, *policy, c.frame);
    at::manual_seed(4);
    std::vector<at::Tensor> blocks;
    for (int b = 0; b < 4; ++b) {
      const at::Tensor noise = at::randn({1, 1, 3, 32, 32});
      const at::Tensor actions = at::full({1, 1}, b % 5, at::kLong);
      const at::Tensor x0 =
          sampler.denoise(noise.to(device, dtype), actions.to(device), b, b, at::Tensor());
      sampler.commit(x0, actions.to(device), b, b, at::Tensor());
      blocks.push_back(x0.to(at::kCPU, at::kFloat));
    }
    return at::cat(blocks, 1);
  };
  const at::Tensor expected = run(at::kCPU, at::kFloat);
  const at::Tensor got = run(at::kCUDA, at::kBFloat16);
  EXPECT_LT(relative_error(got, expected), 5e-2);
}

TEST(ModelGpu, SessionStepsOnCuda) {
  REQUIRE_CUDA();
  auto session =
      rollout::Session::create(small_config(1), "", "dense", {{"window", 8}}, 0, at::kCUDA);
  for (int i = 0; i < 12; ++i) session->step(Action::kRight);
  EXPECT_EQ(session->frame_index(), 12u);
  EXPECT_GT(session->stats().policy.total_tokens(), 0);
}

// Note [Block graph]: a rollout whose denoising forwards are replayed from a CUDA graph shows
// exactly the frames of the same rollout run eagerly, through a live settings change (a new key,
// so a second recording) in the middle.
TEST(ModelGpu, GraphReplayShowsTheEagerFrames) {
  REQUIRE_CUDA();
  struct Case {
    std::string policy;
    nlohmann::json settings, change;  // `change` is applied live at frame 14
  };
  // tempcache and combined: tau 0.6 merges often, a budget of 3 frames' entries per head evicts
  // every block, so the recorded commit matches, merges, evicts and moves entries; combined's
  // forced cast gives it one Spatial (4x4-token cells) and one Global head.
  const int frame_tokens = 8 * 8;  // 32x32 frames in 4x4 patches
  const std::vector<Case> cases = {
      {"dense", {{"window", 4}}, {{"window", 5}}},
      {"headcast", {{"window", 4}, {"query_sample", 64}}, {{"window", 5}}},
      {"tempcache", {{"tau", 0.6}, {"budget", 3 * frame_tokens}}, {{"tau", 0.7}}},
      {"combined",
       {{"window", 4},
        {"cell", 4},
        {"cast", {{"mix", {0, 0, 1, 1}}}},
        {"tau", 0.6},
        {"budget", 3 * frame_tokens}},
       {{"tau", 0.7}}}};
  for (const Case& c : cases) {
    const std::string& policy = c.policy;
    const auto run = [&](bool graphs) {
      rollout::SessionOptions options;
      options.cuda_graphs = graphs;
      auto session = rollout::Session::create(small_config(1), "", c.policy, c.settings, 9,
                                              at::kCUDA, options);
      std::vector<at::Tensor> frames;
      for (int i = 0; i < 24; ++i) {
        if (i == 14) session->configure_policy(c.change);
        session->step(static_cast<Action>(i % 5));
        frames.push_back(session->frame_on_device().to(at::kCPU, at::kFloat));
      }
      return std::make_pair(at::stack(frames), session->stats());
    };
    const auto [eager, eager_stats] = run(false);
    const auto [graphed, stats] = run(true);
    EXPECT_EQ(eager_stats.graph_replayed_blocks, 0) << policy;
    EXPECT_GE(stats.graph_recordings, 2) << policy;
    EXPECT_GE(stats.graph_replayed_blocks, 8) << policy;
    EXPECT_TRUE(at::equal(graphed, eager))
        << policy << ": max difference " << (graphed - eager).abs().max().item<float>();
  }
}

// Note [Previous-frame skip] (the reference is a static input of the recording) with Note [Action
// guidance] on the first step and context noise: replayed frames equal the eager ones.
TEST(ModelGpu, GraphReplayWithThePreviousFrameSkipAndGuidance) {
  REQUIRE_CUDA();
  ModelConfig c = small_config(1);
  c.num_actions = 6;
  c.sampler.steps = 2;
  c.sampler.context_noise = 0.1;
  c.sampler.action_guidance = 2.0;
  c.sampler.action_guidance_steps = 1;
  c.sampler.dropped_action = 5;
  c.prediction.previous_frame_skip = true;
  c.prediction.spread = 0.5;
  const auto run = [&](bool graphs) {
    rollout::SessionOptions options;
    options.cuda_graphs = graphs;
    options.seed_frames = 1;
    auto session =
        rollout::Session::create(c, "", "headcast", {{"window", 4}}, 9, at::kCUDA, options);
    std::vector<at::Tensor> frames;
    for (int i = 0; i < 16; ++i) {
      session->step(static_cast<Action>(i % 5));
      frames.push_back(session->frame_on_device().to(at::kCPU, at::kFloat));
    }
    return std::make_pair(at::stack(frames), session->stats());
  };
  const auto [eager, eager_stats] = run(false);
  const auto [graphed, stats] = run(true);
  EXPECT_EQ(eager_stats.graph_replayed_blocks, 0);
  EXPECT_GE(stats.graph_replayed_blocks, 8);
  EXPECT_TRUE(at::equal(graphed, eager))
      << "max difference " << (graphed - eager).abs().max().item<float>();
}

}  // namespace
}  // namespace wc::model
