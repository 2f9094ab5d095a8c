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
#include "engine/model/prediction.h"
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

// Note [Palette snap] turned off and on again live: the recording made under the old choice is
// never replayed under the new one (Note [Block graph]), so the frames are the eager ones, and
// each change costs a new recording.
TEST(ModelGpu, GraphReplayFollowsALivePaletteSnapToggle) {
  REQUIRE_CUDA();
  ModelConfig c = small_config(1);
  c.palette.colours = {{0, 0, 0}, {255, 255, 255}, {98, 178, 74}, {46, 102, 204}};
  const auto run = [&](bool graphs) {
    rollout::SessionOptions options;
    options.cuda_graphs = graphs;
    auto session = rollout::Session::create(c, "", "dense", {{"window", 4}}, 9, at::kCUDA, options);
    std::vector<at::Tensor> frames;
    for (int i = 0; i < 24; ++i) {
      if (i == 8 || i == 16) session->set_palette_snap(i == 16);
      session->step(static_cast<Action>(i % 5));
      frames.push_back(session->frame_on_device().to(at::kCPU, at::kFloat));
    }
    return std::make_pair(at::stack(frames), session->stats());
  };
  const auto [eager, eager_stats] = run(false);
  const auto [graphed, stats] = run(true);
  EXPECT_EQ(eager_stats.graph_replayed_blocks, 0);
  EXPECT_GE(stats.graph_recordings, 3);
  EXPECT_GE(stats.graph_replayed_blocks, 12);
  // Four colours while snapped, the model's raw values in between.
  const auto colours = [](const at::Tensor& frame) {
    return std::get<0>(at::unique_dim(frame.reshape({3, -1}).t().contiguous(), 0)).size(0);
  };
  EXPECT_LE(colours(eager[7]), 4);
  EXPECT_GT(colours(eager[12]), 4);
  EXPECT_LE(colours(eager[20]), 4);
  EXPECT_TRUE(at::equal(graphed, eager))
      << "max difference " << (graphed - eager).abs().max().item<float>();
}

// The skip experiments' sampler: Note [Previous-frame skip] (the reference is a static input of
// the recording) with Note [Action guidance] on the first step and context noise. Replayed
// frames equal the eager ones.
void expect_skip_graph_replay_equals_eager(
    int move_pixels, bool painted = false, bool per_patch = false,
    PredictionConfig::MoveChoice how = PredictionConfig::MoveChoice::kSample) {
  ModelConfig c = small_config(1);
  c.num_actions = 6;
  c.sampler.steps = 2;
  c.sampler.context_noise = 0.1;
  c.sampler.action_guidance = 2.0;
  c.sampler.action_guidance_steps = 1;
  c.sampler.dropped_action = 5;
  c.prediction.previous_frame_skip = true;
  c.prediction.spread = 0.5;
  c.prediction.move_pixels = move_pixels;
  if (painted) {  // Note [Painted pixels]: random weights paint often, so the draws are exercised
    c.palette.colours = {{0, 0, 0}, {255, 255, 255}, {98, 178, 74}, {46, 102, 204}};
    c.prediction.paint_colours = 4;
    c.prediction.move_choice = how;
    c.prediction.choice_floor = 0.05;
    c.prediction.draw_per_patch = per_patch;
  }
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

// With the plain skip and with a moved reference (Note [Moved reference]), whose choice is
// recorded with the rest.
TEST(ModelGpu, GraphReplayWithThePreviousFrameSkipAndGuidance) {
  REQUIRE_CUDA();
  for (const int move_pixels : {0, 8}) {
    SCOPED_TRACE("move_pixels " + std::to_string(move_pixels));
    expect_skip_graph_replay_equals_eager(move_pixels);
  }
}

// Note [Choice draw]: painted choices drawn from the block's noise, per pixel and per patch, are
// recorded with the rest; replay draws what eager play draws.
TEST(ModelGpu, GraphReplayWithPaintedChoicesDrawsTheEagerDraws) {
  REQUIRE_CUDA();
  for (const bool per_patch : {false, true}) {
    SCOPED_TRACE(per_patch ? "per patch" : "per pixel");
    expect_skip_graph_replay_equals_eager(8, /*painted=*/true, per_patch);
  }
}

// Note [New ground]: the likeliest move, and paints drawn where it reaches past the border, are
// recorded with the rest; replay draws what eager play draws.
TEST(ModelGpu, GraphReplayWithNewGroundDrawsTheEagerDraws) {
  REQUIRE_CUDA();
  expect_skip_graph_replay_equals_eager(8, /*painted=*/true, /*per_patch=*/false,
                                        PredictionConfig::MoveChoice::kNewGround);
}

// Note [Choice temperature], live: a temperature change drops the recorded block, so replay
// after it draws what eager play draws at the new temperature, not what the recording baked in.
TEST(ModelGpu, ALiveChoiceTemperatureReRecordsTheBlock) {
  REQUIRE_CUDA();
  ModelConfig c = small_config(1);
  c.num_actions = 6;
  c.sampler.steps = 1;
  c.prediction.previous_frame_skip = true;
  c.prediction.move_pixels = 8;
  c.palette.colours = {{0, 0, 0}, {255, 255, 255}, {98, 178, 74}, {46, 102, 204}};
  c.prediction.paint_colours = 4;
  c.prediction.move_choice = PredictionConfig::MoveChoice::kNewGround;
  const auto run = [&](bool graphs, bool change) {
    rollout::SessionOptions options;
    options.cuda_graphs = graphs;
    options.seed_frames = 1;
    auto session = rollout::Session::create(c, "", "dense", {{"window", 4}}, 9, at::kCUDA, options);
    std::vector<at::Tensor> frames;
    for (int i = 0; i < 24; ++i) {
      if (change && i == 12) session->set_choice_temperature(0.05);
      session->step(static_cast<Action>(1 + i % 4));
      frames.push_back(session->frame_on_device().to(at::kCPU, at::kFloat));
    }
    return std::make_pair(at::stack(frames), session->stats());
  };
  const auto [eager, eager_stats] = run(false, true);
  const auto [graphed, stats] = run(true, true);
  const auto [unchanged, unchanged_stats] = run(true, false);
  EXPECT_GE(stats.graph_replayed_blocks, 8);
  EXPECT_TRUE(at::equal(graphed, eager))
      << "max difference " << (graphed - eager).abs().max().item<float>();
  EXPECT_TRUE(at::equal(graphed.slice(0, 0, 12), unchanged.slice(0, 0, 12)));
  EXPECT_FALSE(at::equal(graphed.slice(0, 12), unchanged.slice(0, 12)));
}

// New ground on CUDA against the CPU on the same fresh random logits and noise.
TEST(ModelGpu, NewGroundOnCudaMatchesTheCpu) {
  REQUIRE_CUDA();
  at::manual_seed(62);
  at::Tensor logits = at::randn({2, 4, 5 + 26, 64, 64}) * 2;
  for (int f = 0; f < 4; ++f) logits.select(1, f).select(1, 1 + f) += 4.0;  // one edge each
  const at::Tensor noise = at::randn({2, 4, 3, 64, 64});
  const auto draw = [&](const at::Device& device) {
    return choice_index(logits.to(device), PredictionConfig::MoveChoice::kNewGround,
                        choice_draw(noise.to(device)), 8)
        .to(at::kCPU);
  };
  const at::Tensor cpu = draw(at::kCPU), cuda = draw(at::kCUDA);
  EXPECT_GT((cpu >= 5).sum().item<int64_t>(), 1000);
  EXPECT_GE((cpu == cuda).to(at::kFloat).mean().item<double>(), 0.999);
}

// Uncovered ground (Note [Uncovered ground]) on CUDA against the CPU on the same fresh random
// logits and a frame of few colours.
TEST(ModelGpu, UncoveredGroundOnCudaMatchesTheCpu) {
  REQUIRE_CUDA();
  at::manual_seed(64);
  at::Tensor logits = at::randn({2, 4, 5 + 26, 64, 64});
  for (int f = 0; f < 4; ++f) logits.select(1, f).select(1, 1 + f) += 3.0;  // mostly one scroll
  const at::Tensor previous =
      at::randint(3, {2, 4, 1, 64, 64}).to(at::kFloat).expand({-1, -1, 3, -1, -1}) - 1.0;
  const at::Tensor cpu = new_ground_pixels(logits, 8, previous);
  const at::Tensor cuda =
      new_ground_pixels(logits.to(at::kCUDA), 8, previous.to(at::kCUDA)).to(at::kCPU);
  EXPECT_GT((cpu & new_ground_pixels(logits, 8).logical_not()).sum().item<int64_t>(), 100);
  EXPECT_TRUE(at::equal(cpu, cuda));
}

// The drawn choice on CUDA against the CPU's on the same fresh random logits and noise: the
// same index wherever a draw is not within rounding of a boundary.
TEST(ModelGpu, PaintedDrawsOnCudaMatchTheCpu) {
  REQUIRE_CUDA();
  at::manual_seed(61);
  const at::Tensor logits = at::randn({2, 2, 5 + 26, 64, 64}) * 2;
  const at::Tensor noise = at::randn({2, 2, 3, 64, 64});
  const auto draw = [&](const at::Device& device) {
    const at::Tensor shaped = shaped_logits(logits.to(device), 0.8, 0.05);
    return choice_index(shaped, PredictionConfig::MoveChoice::kSample,
                        choice_draw(noise.to(device), 8, 8))
        .to(at::kCPU);
  };
  const at::Tensor cpu = draw(at::kCPU), cuda = draw(at::kCUDA);
  EXPECT_GT((cpu >= 5).sum().item<int64_t>(), 0);
  EXPECT_GE((cpu == cuda).to(at::kFloat).mean().item<double>(), 0.999);
}

// Note [Remembered ground] on CUDA against the CPU: the velocity of a reference with a ring of
// remembered ground (half of it unknown) on the same fresh random output, frames and draws.
TEST(ModelGpu, RememberedGroundOnCudaMatchesTheCpu) {
  REQUIRE_CUDA();
  at::manual_seed(65);
  PredictionConfig prediction;
  prediction.previous_frame_skip = true;
  prediction.move_pixels = 8;
  prediction.paint_colours = 26;
  prediction.move_choice = PredictionConfig::MoveChoice::kNewGround;
  at::Tensor output = at::randn({2, 4, 3 + 5 + 26, 64, 64});
  for (int f = 0; f < 4; ++f) output.select(1, f).select(1, 3 + 1 + f) += 4.0;  // one edge each
  at::Tensor ring = at::rand({2, 4, 3, 80, 80}) * 2 - 1;
  ring.masked_fill_((at::rand({2, 4, 1, 80, 80}) < 0.5).expand_as(ring), NAN);
  ring.slice(3, 8, 72).slice(4, 8, 72).copy_(at::rand({2, 4, 3, 64, 64}) * 2 - 1);
  const at::Tensor x_t = at::randn({2, 4, 3, 64, 64});
  const at::Tensor t = at::rand({2, 4});
  const at::Tensor paint = at::rand({26, 3}) * 2 - 1;
  const auto velocity = [&](const at::Device& device) {
    const ChoiceInputs choice{paint.to(device), choice_draw(x_t.to(device))};
    return velocity_from_output(prediction, output.to(device), x_t.to(device), t.to(device),
                                ring.to(device), choice)
        .to(at::kCPU);
  };
  const at::Tensor cpu = velocity(at::kCPU), cuda = velocity(at::kCUDA);
  EXPECT_TRUE(at::isfinite(cpu).all().item<bool>());
  // Draws within rounding of a boundary may pick another paint: nearly every value agrees.
  EXPECT_GE(at::isclose(cpu, cuda, 1e-4, 1e-4).to(at::kFloat).mean().item<double>(), 0.999);
}

// Note [Remembered ground] with CUDA graphs, on the bundled model (whose moves scroll): a walk
// out and back with memory on replays from its recording exactly the frames of eager play, and
// the memory fills.
TEST(ModelGpu, GraphReplayWithRememberedGroundShowsTheEagerFrames) {
  REQUIRE_CUDA();
  const std::string bundled = std::string(WORLDCAST_SOURCE_DIR) + "/assets/models/game-small-moves";
  ModelConfig config = load_model_config(bundled + "/config.json");
  apply_remember_ground(config, "on", "test");
  const auto run = [&](bool graphs) {
    rollout::SessionOptions options;
    options.cuda_graphs = graphs;
    auto session = rollout::Session::create(config, bundled, "dense", nlohmann::json::object(),
                                            1000001, at::kCUDA, options);
    std::vector<at::Tensor> frames;
    for (int i = 0; i < 24; ++i) {
      session->step(i < 12 ? Action::kRight : Action::kLeft);
      frames.push_back(session->frame_on_device().to(at::kCPU, at::kFloat));
    }
    return std::make_pair(at::stack(frames), session->stats());
  };
  const auto [eager, eager_stats] = run(false);
  const auto [graphed, stats] = run(true);
  EXPECT_GE(stats.graph_replayed_blocks, 8);
  EXPECT_GT(stats.remembered_cells, 0);
  EXPECT_EQ(stats.view_x, eager_stats.view_x);
  EXPECT_TRUE(at::equal(graphed, eager))
      << "max difference " << (graphed - eager).abs().max().item<float>();
}

}  // namespace
}  // namespace wc::model
