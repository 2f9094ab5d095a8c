// Note [Stay bias] set live in a running Session (the viewer's slider) on a model that takes each
// pixel's likeliest move: a live change gives the frames of a config that chose the same bias
// from the start, the choice survives a policy switch and a reset, and a model that takes no
// likeliest move, or a bias out of range, is refused with the Session unchanged.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "engine/core/error.h"
#include "engine/rollout/session.h"
#include "tests/model/model_test_util.h"
#include "tests/rollout/session_play.h"

namespace wc::rollout {
namespace {

using ::testing::HasSubstr;

model::ModelConfig sharpest_config(double stay_bias) {
  model::ModelConfig c = testing::tiny_config();
  c.prediction.previous_frame_skip = true;
  c.prediction.move_pixels = 4;
  c.prediction.move_choice = model::PredictionConfig::MoveChoice::kSharpest;
  c.prediction.stay_bias = stay_bias;
  return c;
}

std::unique_ptr<Session> make(const model::ModelConfig& config, const char* policy = "dense",
                              uint64_t seed = 5) {
  return Session::create(config, "", policy, {{"window", 4}}, seed, at::kCPU);
}

TEST(SessionStayBias, ALiveChangeGivesTheFramesOfTheConfigsChoice) {
  auto live = make(sharpest_config(0.0));
  EXPECT_TRUE(live->takes_likeliest_move());
  EXPECT_EQ(live->stay_bias(), 0.0);
  live->set_stay_bias(5.0);
  EXPECT_EQ(live->stay_bias(), 5.0);
  const std::vector<at::Tensor> biased = play(*live, 4);
  EXPECT_TRUE(same_blocks(biased, play(*make(sharpest_config(5.0)), 4)));
  // Random weights' moves are anything but sure: a bias of 5 keeps pixels that would move.
  EXPECT_FALSE(same_blocks(biased, play(*make(sharpest_config(0.0)), 4)));
}

TEST(SessionStayBias, TheChoiceSurvivesAPolicySwitchAndAReset) {
  auto s = make(sharpest_config(0.0));
  s->set_stay_bias(2.5);
  play(*s, 2);
  s->switch_policy("headcast", {{"window", 4}});  // a new sampler
  EXPECT_EQ(s->stay_bias(), 2.5);
  s->reset(9);
  EXPECT_EQ(s->stay_bias(), 2.5);
  EXPECT_TRUE(same_blocks(play(*s, 3), play(*make(sharpest_config(2.5), "headcast", 9), 3)));
}

TEST(SessionStayBias, ModelsWithoutALikeliestMoveAndBadBiasesAreRefused) {
  auto plain = make(testing::tiny_config());
  EXPECT_FALSE(plain->takes_likeliest_move());
  EXPECT_THAT(testing::error_of([&] { plain->set_stay_bias(0.5); }),
              HasSubstr("the model takes no likeliest move"));
  auto s = make(sharpest_config(0.5));
  for (const double bad : {-0.1, 101.0}) {
    EXPECT_THAT(testing::error_of([&] { s->set_stay_bias(bad); }),
                HasSubstr("stay bias: must be in [0, 100]"));
  }
  EXPECT_EQ(s->stay_bias(), 0.5);
}

}  // namespace
}  // namespace wc::rollout
