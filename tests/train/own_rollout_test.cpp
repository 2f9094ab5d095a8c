// Note [Own rollout]: the played history is what the sampler plays at run time, block by block,
// and a model that predicts "nothing changed" plays its sink back.
#include <gtest/gtest.h>
#include <torch/autograd.h>

#include <algorithm>
#include <utility>
#include <vector>

#include "engine/model/dit.h"
#include "engine/model/weights.h"
#include "engine/rollout/sampler.h"
#include "engine/train/own_rollout.h"
#include "model/model_test_util.h"

namespace wc::train {
namespace {

model::ModelConfig skip_config() {
  model::ModelConfig c = testing::tiny_config();
  c.num_actions = 6;
  c.prediction.previous_frame_skip = true;
  c.prediction.spread = 0.5;
  c.sampler.steps = 1;
  return c;
}

// Clips of `frames` frames at positions 0.., every clip with context noise.
TeacherForcingBatch clip_batch(int frames, uint64_t seed) {
  at::manual_seed(seed);  // fresh random inputs
  ClipBatch clips;
  clips.frames = at::rand({3, frames, 3, 16, 16}) * 2 - 1;
  clips.actions = at::randint(0, 5, {3, frames}, at::kLong);
  clips.positions = at::arange(frames, at::kLong).repeat({3, 1});
  NoiseSpec noise;
  noise.context_noise_share = 1.0;
  return make_teacher_forcing_batch(clips, noise, 16, 1, seed, at::kCPU);
}

TEST(OwnRollout, AModelThatPredictsNoChangePlaysItsSinkBack) {
  model::CausalDiT dit(skip_config());
  model::init_random_weights(dit, 3);
  torch::NoGradGuard no_grad;
  dit->head->proj->weight.zero_();
  dit->head->proj->bias.zero_();
  const TeacherForcingBatch batch = clip_batch(4, 31);
  const at::Tensor rows = at::tensor({2, 0}, at::kLong);
  const at::Tensor played = own_rollout(*dit, batch, rows, at::randn({2, 3, 3, 16, 16}));
  ASSERT_EQ(played.sizes(), at::IntArrayRef({2, 3, 3, 16, 16}));
  for (int64_t r = 0; r < 2; ++r) {
    const at::Tensor sink = batch.history[rows[r].item<int64_t>()][0];
    for (int64_t i = 0; i < 3; ++i) EXPECT_TRUE(at::allclose(played[r][i], sink, 1e-5, 1e-5));
  }
}

using MoveChoice = model::PredictionConfig::MoveChoice;

void expect_rollout_equals_sampler(int move_pixels, MoveChoice choice, bool palette = false,
                                   bool paint = false, bool per_patch = false) {
  model::ModelConfig config = skip_config();
  if (palette) {  // Note [Palette snap]: both snap each played frame
    config.palette.colours = {{0, 0, 0}, {255, 255, 255}, {98, 178, 74}, {46, 102, 204}};
  }
  if (paint) config.prediction.paint_colours = static_cast<int>(config.palette.colours.size());
  config.prediction.move_pixels = move_pixels;
  config.prediction.move_choice = choice;
  config.prediction.draw_per_patch = per_patch;
  const TeacherForcingBatch batch = clip_batch(4, 32);
  const int64_t row = 1;
  config.sampler.context_noise = batch.context_level[row][0].item<double>();  // one level a clip
  ASSERT_GT(config.sampler.context_noise, 0.0);
  model::CausalDiT dit(config);
  model::init_random_weights(dit, 4);
  torch::NoGradGuard no_grad;
  const at::Tensor noise = at::randn({1, 3, 3, 16, 16});
  const at::Tensor played = own_rollout(*dit, batch, at::tensor({row}, at::kLong), noise);

  testing::FullHistoryPolicy policy(testing::shape_for(config, config.frame));
  rollout::BlockSampler sampler(*dit, policy, config.frame, /*cuda_graphs=*/false);
  const auto actions = [&](int64_t i) {
    return batch.input.actions[row].slice(0, i, i + 1).view({1, 1});
  };
  const auto eps = [&](int64_t i) {
    return batch.context_eps[row].slice(0, i, i + 1).unsqueeze(0);
  };
  at::Tensor previous = batch.history[row].slice(0, 0, 1).unsqueeze(0);  // the sink
  sampler.commit(previous, actions(0), 0, 0, eps(0));
  for (int64_t i = 1; i < 4; ++i) {
    const at::Tensor x0 =
        sampler.generate(noise.slice(1, i - 1, i), actions(i), i, i, eps(i), previous);
    EXPECT_TRUE(at::allclose(played.slice(1, i - 1, i), x0, 1e-4, 1e-4))
        << "frame " << i << ": max difference "
        << (played.slice(1, i - 1, i) - x0).abs().max().item<float>();
    previous = x0;
  }
}

// With the plain skip and with a moved reference, mixed or sharpest (Notes [Moved reference],
// [Sharpest move]): the rollout plays the config's choice, as the sampler does; and with paint
// choices drawn from the block's noise (Notes [Painted pixels], [Choice draw]), the same draws.
TEST(OwnRollout, EqualsTheSamplerPlayingTheClip) {
  for (const auto& [move_pixels, choice] : {std::pair{0, MoveChoice::kMix},
                                            {4, MoveChoice::kMix},
                                            {4, MoveChoice::kSharpest},
                                            {4, MoveChoice::kSample}}) {
    SCOPED_TRACE("move_pixels " + std::to_string(move_pixels) + " choice " +
                 std::to_string(static_cast<int>(choice)));
    expect_rollout_equals_sampler(move_pixels, choice);
  }
  SCOPED_TRACE("palette snap");
  expect_rollout_equals_sampler(4, MoveChoice::kSharpest, /*palette=*/true);
  SCOPED_TRACE("painted, sampled");
  expect_rollout_equals_sampler(4, MoveChoice::kSample, /*palette=*/true, /*paint=*/true);
  SCOPED_TRACE("painted, drawn per patch");
  expect_rollout_equals_sampler(4, MoveChoice::kSample, true, true, /*per_patch=*/true);
}

// Note [Deep rollout]: with a lead, the rollout plays the sink, the lead and the run under the
// window of play (the sink and the 2 newest frames for 4-frame clips), reading the window afresh
// for each frame, and returns the run. The reference plays each frame through the inference path
// from a fresh cache: the sink and the window's frames committed, then the frame generated.
TEST(OwnRollout, ALeadIsPlayedFirstUnderThePlayWindow) {
  model::ModelConfig config = skip_config();
  config.prediction.move_pixels = 4;
  config.prediction.move_choice = MoveChoice::kSharpest;
  const int64_t frames = 4, lead = 3, played = lead + frames - 1, rolling = frames - 2;
  at::manual_seed(33);
  ClipBatch clips;
  clips.frames = at::rand({2, frames, 3, 16, 16}) * 2 - 1;
  clips.actions = at::randint(0, 5, {2, frames}, at::kLong);
  clips.positions = at::cat(
      {at::zeros({2, 1}, at::kLong), at::arange(lead + 1, lead + frames, at::kLong).repeat({2, 1})},
      1);
  clips.lead_actions = at::randint(0, 5, {2, lead}, at::kLong);
  clips.lead_positions = at::arange(1, lead + 1, at::kLong).repeat({2, 1});
  NoiseSpec spec;
  spec.context_noise_share = 1.0;
  const TeacherForcingBatch batch = make_teacher_forcing_batch(clips, spec, 16, 1, 33, at::kCPU);
  const int64_t row = 1;
  config.sampler.context_noise = batch.context_level[row][0].item<double>();
  model::CausalDiT dit(config);
  model::init_random_weights(dit, 5);
  torch::NoGradGuard no_grad;
  const at::Tensor noise = at::randn({1, played, 3, 16, 16});
  const at::Tensor lead_eps = at::randn({1, lead, 3, 16, 16});
  const at::Tensor run = own_rollout(*dit, batch, at::tensor({row}, at::kLong), noise, lead_eps);
  ASSERT_EQ(run.sizes(), at::IntArrayRef({1, frames - 1, 3, 16, 16}));

  // Frame i of the game: the sink, the lead's frames, then the run's.
  const auto actions = [&](int64_t i) {
    const at::Tensor a = i >= 1 && i <= lead ? clips.lead_actions[row][i - 1]
                                             : batch.input.actions[row][i == 0 ? 0 : i - lead];
    return a.view({1, 1});
  };
  const auto eps = [&](int64_t i) {
    const at::Tensor e =
        i >= 1 && i <= lead ? lead_eps[0][i - 1] : batch.context_eps[row][i == 0 ? 0 : i - lead];
    return e.view({1, 1, 3, 16, 16});
  };
  std::vector<at::Tensor> game = {batch.history[row].slice(0, 0, 1).unsqueeze(0)};  // the sink
  for (int64_t i = 1; i <= played; ++i) {
    testing::FullHistoryPolicy policy(testing::shape_for(config, config.frame));
    rollout::BlockSampler sampler(*dit, policy, config.frame, /*cuda_graphs=*/false);
    sampler.commit(game[0], actions(0), 0, 0, eps(0));
    for (int64_t j = std::max<int64_t>(1, i - rolling); j < i; ++j) {
      sampler.commit(game[static_cast<size_t>(j)], actions(j), j, j, eps(j));
    }
    game.push_back(
        sampler.generate(noise.slice(1, i - 1, i), actions(i), i, i, eps(i), game.back()));
    if (i <= lead) continue;
    const at::Tensor own = run.slice(1, i - lead - 1, i - lead);
    EXPECT_TRUE(at::allclose(own, game.back(), 1e-4, 1e-4))
        << "frame " << i << ": max difference " << (own - game.back()).abs().max().item<float>();
  }
}

}  // namespace
}  // namespace wc::train
