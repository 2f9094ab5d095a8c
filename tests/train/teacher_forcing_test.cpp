// Two-stream teacher forcing trains exactly what inference runs: each noisy frame's prediction
// equals a plain block-causal forward over [clean history, that noisy frame].
#include <gtest/gtest.h>

#include "engine/model/dit.h"
#include "engine/model/ops.h"
#include "engine/model/weights.h"
#include "engine/train/teacher_forcing.h"
#include "model/model_test_util.h"

namespace wc::train {
namespace {

TEST(TwoStreamMask, ContextIsBlockCausalNoisySeesEarlierContextAndItself) {
  // 4 frames, one token each, blocks of 2: context 0..3, noisy copies of frames 2, 3.
  const at::Tensor m = two_stream_mask(4, 1, 2);
  ASSERT_EQ(m.sizes(), at::IntArrayRef({6, 6}));
  const bool expected[6][6] = {
      {1, 1, 0, 0, 0, 0}, {1, 1, 0, 0, 0, 0}, {1, 1, 1, 1, 0, 0},
      {1, 1, 1, 1, 0, 0}, {1, 1, 0, 0, 1, 1}, {1, 1, 0, 0, 1, 1},
  };
  for (int i = 0; i < 6; ++i)
    for (int j = 0; j < 6; ++j) {
      EXPECT_EQ(m[i][j].item<bool>(), expected[i][j]) << i << "," << j;
    }
  // Tokens of a frame share its row and column pattern.
  EXPECT_TRUE(two_stream_mask(3, 4, 1).equal(
      two_stream_mask(3, 1, 1).repeat_interleave(4, 0).repeat_interleave(4, 1)));
}

TEST(TeacherForcing, NoisyStreamEqualsInferenceOverCleanHistory) {
  for (int fpb : {1, 2}) {
    model::ModelConfig config = testing::tiny_config(fpb);
    config.num_actions = 6;
    model::CausalDiT model(config);
    model::init_random_weights(model, 11);
    model->eval();
    at::NoGradGuard no_grad;

    const int frames = 3 * fpb;
    ClipBatch clips;
    clips.frames = at::rand({2, frames, 3, 16, 16}) * 2 - 1;
    clips.actions = at::randint(0, 5, {2, frames}, at::kLong);
    clips.positions = at::arange(frames, at::kLong).view({1, frames}).repeat({2, 1});
    clips.positions[1] += 700;  // the second clip sits far into a game
    NoiseSpec noise;
    noise.context_noise_share = 0.0;
    noise.action_dropout = 0.3;
    const int tokens = 16;
    const TeacherForcingBatch batch =
        make_teacher_forcing_batch(clips, noise, tokens, fpb, 5, at::kCPU);
    const at::Tensor two_stream =
        model->forward_masked(batch.input, two_stream_mask(frames, tokens, fpb));

    for (int64_t row = 0; row < 2; ++row) {
      for (int block = 1; block < 3; ++block) {
        // Inference view: clean frames of blocks < block, then the noisy block.
        const int history = block * fpb;
        const int noisy_at = frames + (block - 1) * fpb;
        const auto part = [&](const at::Tensor& x) {
          return at::cat({x.slice(1, 0, history), x.slice(1, noisy_at, noisy_at + fpb)}, 1)
              .slice(0, row, row + 1);
        };
        model::FrameBatch plain;
        plain.frames = part(batch.input.frames);
        plain.t = part(batch.input.t);
        plain.actions = part(batch.input.actions);
        plain.positions = part(batch.input.positions);
        const at::Tensor reference = model->forward_train(plain).slice(1, history);
        const at::Tensor ours =
            two_stream.slice(0, row, row + 1).slice(1, noisy_at, noisy_at + fpb);
        EXPECT_TRUE(at::allclose(ours, reference, 1e-4, 1e-5))
            << "fpb " << fpb << " row " << row << " block " << block << " max diff "
            << (ours - reference).abs().max().item<float>();
      }
    }
  }
}

TEST(TeacherForcing, LevelsTargetsAndDropoutFollowTheSpec) {
  ClipBatch clips;
  clips.frames = at::rand({64, 4, 3, 8, 8});
  clips.actions = at::randint(0, 5, {64, 4}, at::kLong);
  clips.positions = at::arange(4, at::kLong).repeat({64, 1});
  NoiseSpec noise;
  noise.schedule_share = 1.0;
  noise.schedule_levels = {0.25};
  noise.context_noise_share = 0.0;
  noise.action_dropout = 0.5;
  const TeacherForcingBatch b = make_teacher_forcing_batch(clips, noise, 4, 1, 3, at::kCPU);
  EXPECT_EQ(b.input.frames.size(1), 7);
  EXPECT_TRUE(b.input.t.slice(1, 0, 4).eq(0).all().item<bool>());
  EXPECT_TRUE(b.input.t.slice(1, 4).eq(0.25).all().item<bool>());
  // x_t = (1 − t)·x0 + t·ε and target ε − x0 recover x0: x0 = x_t − t·target.
  const at::Tensor x0 = b.input.frames.slice(1, 4) - 0.25 * b.target;
  EXPECT_TRUE(at::allclose(x0, clips.frames.slice(1, 1), 1e-5, 1e-5));
  const double dropped =
      b.input.actions.eq(noise.dropped_action).to(at::kFloat).mean().item<double>();
  EXPECT_GT(dropped, 0.35);
  EXPECT_LT(dropped, 0.65);
  // Same seed, same batch; another seed, other noise.
  EXPECT_TRUE(make_teacher_forcing_batch(clips, noise, 4, 1, 3, at::kCPU)
                  .input.frames.equal(b.input.frames));
  EXPECT_FALSE(make_teacher_forcing_batch(clips, noise, 4, 1, 4, at::kCPU)
                   .input.frames.equal(b.input.frames));
}

// Note [Own context]: the share decides which clips get their own history, without changing any
// other draw; replacing the history rebuilds exactly those clips' context stream, with the sink
// kept and the batch's own context noise, and leaves the noisy stream alone.
TEST(OwnContext, ChosenClipsSeeTheGivenHistoryUnderTheSameContextNoise) {
  at::manual_seed(21);  // fresh random inputs
  ClipBatch clips;
  clips.frames = at::rand({16, 3, 3, 8, 8}) * 2 - 1;
  clips.actions = at::randint(0, 5, {16, 3}, at::kLong);
  clips.positions = at::arange(3, at::kLong).repeat({16, 1});
  NoiseSpec noise;
  noise.context_noise_share = 1.0;
  const TeacherForcingBatch off = make_teacher_forcing_batch(clips, noise, 4, 1, 9, at::kCPU);
  EXPECT_FALSE(off.own_context.any().item<bool>());
  EXPECT_TRUE(off.history.equal(clips.frames));
  noise.own_context_share = 0.5;
  TeacherForcingBatch b = make_teacher_forcing_batch(clips, noise, 4, 1, 9, at::kCPU);
  EXPECT_TRUE(b.input.frames.equal(off.input.frames));  // the other draws are unchanged
  EXPECT_TRUE(b.input.actions.equal(off.input.actions));
  const int64_t chosen = b.own_context.sum().item<int64_t>();
  EXPECT_GT(chosen, 0);
  EXPECT_LT(chosen, 16);

  // Unchanged when no clip is chosen.
  const at::Tensor predicted = at::rand({16, 2, 3, 8, 8}) * 2 - 1;
  TeacherForcingBatch none = b;
  use_own_context(none, predicted, at::zeros({16}, at::kBool), 1);
  EXPECT_TRUE(none.input.frames.equal(b.input.frames));

  const at::Tensor before = b.input.frames.clone();
  use_own_context(b, predicted, b.own_context, 1);
  for (int64_t i = 0; i < 16; ++i) {
    const bool own = b.own_context[i].item<bool>();
    const at::Tensor c = b.context_level[i];
    const at::Tensor history =
        own ? at::cat({clips.frames[i].slice(0, 0, 1), predicted[i]}, 0) : clips.frames[i];
    EXPECT_TRUE(b.history[i].equal(history)) << i;
    EXPECT_TRUE(at::allclose(b.input.frames[i].slice(0, 0, 3),
                             (1 - c) * history + c * b.context_eps[i], 1e-6, 1e-6))
        << i;
    EXPECT_TRUE(b.input.frames[i].slice(0, 3).equal(before[i].slice(0, 3))) << i;
    if (!own) {
      EXPECT_TRUE(b.input.frames[i].equal(before[i])) << i;
    }
  }
}

}  // namespace
}  // namespace wc::train
