// Note [Choice temperature] set live in a running Session (the viewer's slider) on a model that
// draws new ground (Note [New ground]): a live change gives the frames of a config that chose the
// same temperature from the start, the choice survives a policy switch and a reset, and a model
// that draws nothing, or a temperature out of range, is refused with the Session unchanged.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "engine/core/error.h"
#include "engine/rollout/session.h"
#include "tests/model/model_test_util.h"
#include "tests/rollout/session_play.h"

namespace wc::rollout {
namespace {

using ::testing::HasSubstr;

model::ModelConfig new_ground_config(double temperature) {
  model::ModelConfig c = testing::tiny_config();
  c.palette.colours = {{0, 0, 0}, {255, 255, 255}, {98, 178, 74}, {46, 102, 204}, {230, 72, 204}};
  c.prediction.previous_frame_skip = true;
  c.prediction.move_pixels = 4;
  c.prediction.paint_colours = 5;
  c.prediction.move_choice = model::PredictionConfig::MoveChoice::kNewGround;
  c.prediction.choice_temperature = temperature;
  return c;
}

std::unique_ptr<Session> make(const model::ModelConfig& config) {
  return Session::create(config, "", "dense", {{"window", 4}}, 5, at::kCPU);
}

TEST(SessionChoiceTemperature, ALiveChangeGivesTheFramesOfTheConfigsChoice) {
  auto live = make(new_ground_config(1.0));
  EXPECT_TRUE(live->draws_choices());
  EXPECT_EQ(live->choice_temperature(), 1.0);
  live->set_choice_temperature(0.05);
  EXPECT_EQ(live->choice_temperature(), 0.05);
  auto chosen = make(new_ground_config(0.05));
  auto hot = make(new_ground_config(1.0));
  const std::vector<at::Tensor> cold_blocks = play(*live, 4);
  EXPECT_TRUE(same_blocks(cold_blocks, play(*chosen, 4)));
  // Random weights bring new ground in at the border in every block: the draws differ.
  EXPECT_FALSE(same_blocks(cold_blocks, play(*hot, 4)));
}

TEST(SessionChoiceTemperature, TheChoiceSurvivesAPolicySwitchAndAReset) {
  auto s = make(new_ground_config(1.0));
  s->set_choice_temperature(0.3);
  play(*s, 2);
  s->switch_policy("headcast", {{"window", 4}});  // a new sampler
  EXPECT_EQ(s->choice_temperature(), 0.3);
  s->reset(9);
  EXPECT_EQ(s->choice_temperature(), 0.3);
  auto chosen =
      Session::create(new_ground_config(0.3), "", "headcast", {{"window", 4}}, 9, at::kCPU);
  EXPECT_TRUE(same_blocks(play(*s, 3), play(*chosen, 3)));
}

TEST(SessionChoiceTemperature, ModelsThatDrawNothingAndBadTemperaturesAreRefused) {
  auto plain = make(testing::tiny_config());
  EXPECT_FALSE(plain->draws_choices());
  EXPECT_THAT(testing::error_of([&] { plain->set_choice_temperature(0.5); }),
              HasSubstr("the model draws no choices"));
  auto s = make(new_ground_config(0.5));
  for (const double bad : {0.0, -1.0, 1000.0}) {
    EXPECT_THAT(testing::error_of([&] { s->set_choice_temperature(bad); }),
                HasSubstr("choice temperature: must be in [0.001, 100]"));
  }
  EXPECT_EQ(s->choice_temperature(), 0.5);
}

}  // namespace
}  // namespace wc::rollout
