// Note [Remembered ground] in a running Session, on the bundled model (its trained moves scroll
// the view, which random weights do not): with memory on, a walk out fills the memory and moves
// the view, and the walk back shows other frames than without it; turning it on live gives the
// frames of a config that chose it from the start; it survives a policy switch and starts empty
// on reset; a saved rollout replays exactly; a model that cannot remember is refused unchanged.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <string>

#include "engine/core/error.h"
#include "engine/model/model_config.h"
#include "engine/rollout/session.h"
#include "tests/model/model_test_util.h"
#include "tests/rollout/session_play.h"

namespace wc::rollout {
namespace {

using ::testing::HasSubstr;

const std::string kBundled = std::string(WORLDCAST_SOURCE_DIR) + "/assets/models/game-small-moves";

model::ModelConfig bundled_config(bool remember) {
  model::ModelConfig config = model::load_model_config(kBundled + "/config.json");
  model::apply_remember_ground(config, remember ? "on" : "off", "test");
  return config;
}

std::unique_ptr<Session> make(const model::ModelConfig& config) {
  return Session::create(config, kBundled, "dense", nlohmann::json::object(), 1000001, at::kCPU);
}

// Six frames right, then six back left; each frame as made.
std::vector<at::Tensor> out_and_back(Session& s) {
  std::vector<at::Tensor> frames;
  for (int i = 0; i < 12; ++i) {
    s.step(i < 6 ? Action::kRight : Action::kLeft);
    frames.push_back(s.last_block());
  }
  return frames;
}

TEST(SessionRememberGround, AWalkOutFillsTheMemoryAndTheWalkBackReadsIt) {
  auto off = make(bundled_config(false));
  EXPECT_TRUE(off->can_remember_ground());
  EXPECT_FALSE(off->remember_ground());
  EXPECT_EQ(off->stats().remembered_cells, -1);
  auto on = make(bundled_config(true));
  EXPECT_TRUE(on->remember_ground());
  EXPECT_EQ(on->stats().remembered_cells, 0);
  std::vector<at::Tensor> with, without;
  for (int i = 0; i < 12; ++i) {
    const Action key = i < 6 ? Action::kRight : Action::kLeft;
    on->step(key);
    off->step(key);
    with.push_back(on->last_block());
    without.push_back(off->last_block());
    if (i == 5) {
      EXPECT_GT(on->stats().view_x, 0) << "the model walked right";
      EXPECT_GT(on->stats().remembered_cells, 0);
    }
  }
  // Until the walk turns, nothing past the border was remembered: the same frames.
  EXPECT_TRUE(
      same_blocks({with.begin(), with.begin() + 6}, {without.begin(), without.begin() + 6}));
  EXPECT_FALSE(same_blocks({with.begin() + 6, with.end()}, {without.begin() + 6, without.end()}));
  EXPECT_LT(on->stats().view_x, 6 * 8) << "and walked back";
}

TEST(SessionRememberGround, ALiveChangeGivesTheConfigsFramesAndSurvivesASwitch) {
  auto live = make(bundled_config(false));
  live->set_remember_ground(true);
  EXPECT_TRUE(live->remember_ground());
  EXPECT_TRUE(same_blocks(out_and_back(*live), out_and_back(*make(bundled_config(true)))));
  live->switch_policy("headcast", nlohmann::json::object());
  EXPECT_TRUE(live->remember_ground());
  EXPECT_GT(live->stats().remembered_cells, 0);  // kept across the switch
  live->reset(1000001);
  EXPECT_EQ(live->stats().remembered_cells, 0);
  EXPECT_EQ(live->stats().view_x, 0);
  live->set_remember_ground(false);
  EXPECT_EQ(live->stats().remembered_cells, -1);
}

TEST(SessionRememberGround, ASavedRolloutReplaysExactly) {
  auto s = make(bundled_config(true));
  out_and_back(*s);
  const auto path = std::filesystem::temp_directory_path() / "wc_remember_ground_state.safetensors";
  s->save_state(path.string());
  const at::Tensor last = s->last_block();
  auto again = make(bundled_config(true));
  again->load_state(path.string());
  EXPECT_TRUE(at::equal(again->last_block(), last));
  EXPECT_EQ(again->stats().view_x, s->stats().view_x);
  EXPECT_EQ(again->stats().remembered_cells, s->stats().remembered_cells);
  std::filesystem::remove(path);
}

TEST(SessionRememberGround, AModelThatCannotRememberIsRefusedUnchanged) {
  model::ModelConfig c = testing::tiny_config();
  c.prediction.previous_frame_skip = true;
  c.prediction.move_pixels = 4;
  c.prediction.move_choice = model::PredictionConfig::MoveChoice::kSharpest;
  auto s = Session::create(c, "", "dense", {{"window", 4}}, 5, at::kCPU);
  EXPECT_FALSE(s->can_remember_ground());
  EXPECT_THAT(testing::error_of([&] { s->set_remember_ground(true); }),
              HasSubstr("field 'prediction.move_choice': remembered ground needs move_choice"));
  EXPECT_FALSE(s->remember_ground());
  EXPECT_EQ(s->stats().remembered_cells, -1);
  s->step(Action::kRight);  // still plays
}

}  // namespace
}  // namespace wc::rollout
