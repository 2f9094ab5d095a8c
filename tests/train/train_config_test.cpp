// Training configs: the bundled one parses; every bad field is named; the learning-rate schedule.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <fstream>
#include <functional>

#include "engine/core/error.h"
#include "engine/model/model_config.h"
#include "engine/train/train_config.h"

namespace wc::train {
namespace {

using ::testing::HasSubstr;

const std::string kBundled = std::string(WORLDCAST_SOURCE_DIR) + "/assets/train/game-small.json";

nlohmann::json bundled_json() {
  std::ifstream in(kBundled);
  return nlohmann::json::parse(in);
}

std::string error_of(const nlohmann::json& json) {
  try {
    parse_train_config(json, "run.json");
  } catch (const Error& error) {
    return error.what();
  }
  return "(no error)";
}

// A two-word setting `section.key` ("on" or "off"): absent reads as off, each word parses to what
// `read` says of it, and any other word is refused by name.
void expect_two_words(nlohmann::json j, const std::string& section, const std::string& key,
                      const std::string& on, const std::string& off,
                      const std::function<bool(const TrainConfig&)>& read) {
  j[section].erase(key);
  EXPECT_FALSE(read(parse_train_config(j, "run.json")));
  j[section][key] = on;
  EXPECT_TRUE(read(parse_train_config(j, "run.json")));
  j[section][key] = off;
  EXPECT_FALSE(read(parse_train_config(j, "run.json")));
  j[section][key] = "dream";
  EXPECT_THAT(error_of(j), HasSubstr("field '" + section + "." + key + "': must be"));
}

TEST(TrainConfig, BundledConfigParses) {
  const TrainConfig c = load_train_config(kBundled);
  EXPECT_EQ(c.clips.width, 128);
  EXPECT_EQ(c.noise.dropped_action, 5);
  EXPECT_NE(c.model_config.find("assets/configs/game-small.json"), std::string::npos);
}

// The experiment of the model card's stages 4-5: the previous-frame skip, trained with own
// context (Notes [Previous-frame skip], [Own context]).
TEST(TrainConfig, SkipExperimentConfigParses) {
  const TrainConfig c =
      load_train_config(std::string(WORLDCAST_SOURCE_DIR) + "/assets/train/game-small-skip.json");
  EXPECT_EQ(c.noise.own_context_share, 0.5);
  const model::ModelConfig model = model::load_model_config(c.model_config);
  EXPECT_TRUE(model.prediction.previous_frame_skip);
  EXPECT_FALSE(model::load_model_config(load_train_config(kBundled).model_config)
                   .prediction.previous_frame_skip);
}

// The moves experiment's stages (Notes [Moved reference], [Reference loss], [Own rollout]):
// the same model, its choice trained on the chosen frame's error, then on its own played history.
TEST(TrainConfig, MovesExperimentConfigsParse) {
  const std::string dir = std::string(WORLDCAST_SOURCE_DIR) + "/assets/train/";
  const TrainConfig moves = load_train_config(dir + "game-small-moves.json");
  const TrainConfig rollout = load_train_config(dir + "game-small-moves-rollout.json");
  EXPECT_EQ(moves.loss.reference_weight, 1.0);
  EXPECT_FALSE(moves.noise.own_context_rollout);
  EXPECT_TRUE(rollout.noise.own_context_rollout);
  const TrainConfig deep = load_train_config(dir + "game-small-moves-deep.json");
  EXPECT_EQ(deep.clips.lead_frames, 24);  // Note [Deep rollout]
  EXPECT_EQ(deep.model_config, rollout.model_config);
  const TrainConfig consistent = load_train_config(dir + "game-small-moves-consistent.json");
  EXPECT_TRUE(consistent.loss.consistent_target);  // Note [Consistent target]
  EXPECT_FALSE(consistent.loss.uncovered_from_game);
  const TrainConfig uncovered = load_train_config(dir + "game-small-moves-uncovered.json");
  EXPECT_TRUE(uncovered.loss.consistent_target);  // Note [Uncovered pixels]
  EXPECT_TRUE(uncovered.loss.uncovered_from_game);
  const TrainConfig finish = load_train_config(dir + "game-small-moves-uncovered-finish.json");
  EXPECT_TRUE(finish.loss.uncovered_from_game);  // the same target, a schedule that ends
  EXPECT_EQ(finish.steps, 300);
  // uncovered-finish trained on (the stability run), and the painted models (Note
  // [Painted pixels]) whose configs grow the bundled one by the paint choices.
  EXPECT_TRUE(
      load_train_config(dir + "game-small-moves-uncovered-more.json").loss.uncovered_from_game);
  for (const std::string name : {"game-small-moves-paint.json", "game-small-moves-paint-patch.json",
                                 "game-small-moves-paint-patch-moves.json"}) {
    SCOPED_TRACE(name);
    const TrainConfig painted = load_train_config(dir + name);
    EXPECT_EQ(painted.loss.choice_weight, 1.0);
    const model::ModelConfig paint_model = model::load_model_config(painted.model_config);
    EXPECT_EQ(paint_model.prediction.paint_colours, 26);
    EXPECT_EQ(paint_model.prediction.move_choice, model::PredictionConfig::MoveChoice::kSample);
  }
  EXPECT_GT(consistent.clips.lead_frames, 0);
  EXPECT_EQ(consistent.model_config, rollout.model_config);
  // straight: the consistent target with the sharpest move in the loss.
  const TrainConfig straight = load_train_config(dir + "game-small-moves-straight.json");
  EXPECT_TRUE(straight.loss.consistent_target);
  EXPECT_TRUE(straight.loss.straight_through_moves);  // Note [Straight-through moves]
  EXPECT_EQ(straight.clips.lead_frames, consistent.clips.lead_frames);
  const model::ModelConfig model = model::load_model_config(moves.model_config);
  EXPECT_EQ(model.prediction.move_pixels, 8);
  EXPECT_EQ(model.prediction.move_choice, model::PredictionConfig::MoveChoice::kSharpest);
  EXPECT_EQ(model::model_config_to_json(model),
            model::model_config_to_json(model::load_model_config(rollout.model_config)));
}

// Note [New ground likelihood]: "learn" is optional ("all"); "new_ground" takes no loss section.
TEST(TrainConfig, LearnIsOptionalAndNewGroundTakesNoLoss) {
  nlohmann::json j = bundled_json();
  EXPECT_EQ(parse_train_config(j, "run.json").learn, TrainConfig::Learn::kAll);
  j.erase("loss");
  j["learn"] = "all";
  EXPECT_EQ(parse_train_config(j, "run.json").learn, TrainConfig::Learn::kAll);
  j["learn"] = "new_ground";
  EXPECT_EQ(parse_train_config(j, "run.json").learn, TrainConfig::Learn::kNewGround);
  j["learn"] = "paint";
  EXPECT_THAT(error_of(j), HasSubstr("field 'learn': must be \"all\" or \"new_ground\""));
  j["learn"] = "new_ground";
  j["loss"] = {{"motion_weight", 0.0}, {"motion_threshold", 0.04}};
  EXPECT_THAT(error_of(j), HasSubstr("field 'loss': learning \"new_ground\" trains the paints"));
  const std::string dir = std::string(WORLDCAST_SOURCE_DIR) + "/assets/train/";
  const TrainConfig run = load_train_config(dir + "game-small-moves-new-ground.json");
  EXPECT_EQ(run.learn, TrainConfig::Learn::kNewGround);
  EXPECT_EQ(run.noise.schedule_share, 1.0);  // play's one level, full noise
  EXPECT_EQ(run.noise.schedule_levels, std::vector<double>{1.0});
  EXPECT_EQ(model::load_model_config(run.model_config).prediction.move_choice,
            model::PredictionConfig::MoveChoice::kNewGround);
}

TEST(TrainConfig, BadFieldsAreNamed) {
  nlohmann::json j = bundled_json();
  j["batch"] = 0;
  EXPECT_THAT(error_of(j), HasSubstr("run.json: field 'batch': must be in [1"));
  j = bundled_json();
  j["clips"]["contiguous_share"] = 2.0;
  EXPECT_THAT(error_of(j), HasSubstr("field 'clips.contiguous_share'"));
  j = bundled_json();
  j["noise"]["schedule_levels"] = {0.5, 1.5};
  EXPECT_THAT(error_of(j), HasSubstr("field 'noise.schedule_levels'"));
  j = bundled_json();
  j["optimizer"]["lerning_rate"] = 0.1;
  EXPECT_THAT(error_of(j), HasSubstr("field 'optimizer.lerning_rate': unknown key"));
  j = bundled_json();
  j["state_dtype"] = "f16";
  EXPECT_THAT(error_of(j), HasSubstr("field 'state_dtype'"));
  j = bundled_json();
  j.erase("seed");
  EXPECT_THAT(error_of(j), HasSubstr("field 'seed': missing"));
  EXPECT_THROW(load_train_config("/nonexistent/run.json"), Error);
}

TEST(TrainConfig, LossSectionIsOptionalAndChecked) {
  nlohmann::json j = bundled_json();
  j.erase("loss");
  EXPECT_EQ(parse_train_config(j, "run.json").loss.motion_weight, 0.0);
  j["loss"] = {{"motion_weight", 4.0}, {"motion_threshold", 0.1}};
  const TrainConfig c = parse_train_config(j, "run.json");
  EXPECT_EQ(c.loss.motion_weight, 4.0);
  EXPECT_EQ(c.loss.motion_threshold, 0.1);
  EXPECT_EQ(c.loss.reference_weight, 0.0);
  j["loss"]["reference_weight"] = 2.0;
  EXPECT_EQ(parse_train_config(j, "run.json").loss.reference_weight, 2.0);
  j["loss"]["reference_weight"] = -2.0;
  EXPECT_THAT(error_of(j), HasSubstr("field 'loss.reference_weight': must be in [0"));
  j["loss"].erase("reference_weight");
  EXPECT_FALSE(c.loss.straight_through_moves);
  j["loss"]["straight_through_moves"] = true;
  EXPECT_TRUE(parse_train_config(j, "run.json").loss.straight_through_moves);
  j["loss"]["straight_through_moves"] = 1;
  EXPECT_THAT(error_of(j),
              HasSubstr("field 'loss.straight_through_moves': expected true or false"));
  j["loss"].erase("straight_through_moves");
  EXPECT_EQ(c.loss.choice_weight, 0.0);  // Note [Choice likelihood]
  j["loss"]["choice_weight"] = 1.5;
  EXPECT_EQ(parse_train_config(j, "run.json").loss.choice_weight, 1.5);
  j["loss"]["straight_through_moves"] = true;
  EXPECT_THAT(error_of(j), HasSubstr("field 'loss.straight_through_moves': cannot be used with "
                                     "choice_weight"));
  j["loss"].erase("straight_through_moves");
  j["loss"]["choice_weight"] = -1.0;
  EXPECT_THAT(error_of(j), HasSubstr("field 'loss.choice_weight': must be in [0"));
  j["loss"].erase("choice_weight");
  expect_two_words(j, "loss", "own_target", "consistent", "truth",  // Note [Consistent target]
                   [](const TrainConfig& t) { return t.loss.consistent_target; });
  expect_two_words(j, "loss", "own_target", "consistent_uncovered",
                   "consistent",  // [Uncovered pixels]
                   [](const TrainConfig& t) { return t.loss.uncovered_from_game; });
  j["loss"]["motion_weight"] = -1.0;
  EXPECT_THAT(error_of(j), HasSubstr("field 'loss.motion_weight': must be in [0"));
  j["loss"] = {{"motion_weight", 1.0}, {"motion_threshold", 0.1}, {"motoin", 1}};
  EXPECT_THAT(error_of(j), HasSubstr("field 'loss.motoin': unknown key"));
}

TEST(TrainConfig, OwnContextShareIsOptionalAndChecked) {
  nlohmann::json j = bundled_json();
  j["noise"].erase("own_context_share");
  EXPECT_EQ(parse_train_config(j, "run.json").noise.own_context_share, 0.0);
  j["noise"]["own_context_share"] = 0.25;
  EXPECT_EQ(parse_train_config(j, "run.json").noise.own_context_share, 0.25);
  j["noise"]["own_context_share"] = 1.5;
  EXPECT_THAT(error_of(j), HasSubstr("field 'noise.own_context_share': must be in [0"));
  j["noise"]["own_context_share"] = 0.5;
  expect_two_words(j, "noise", "own_context_source", "rollout", "teacher_forced",
                   [](const TrainConfig& t) { return t.noise.own_context_rollout; });
}

// Note [Overlay repair]: the damaged share is optional (0) and a share.
TEST(TrainConfig, OverlayDamageShareIsOptionalAndChecked) {
  nlohmann::json j = bundled_json();
  EXPECT_EQ(parse_train_config(j, "run.json").noise.overlay_damage_share, 0.0);
  j["noise"]["overlay_damage_share"] = 0.25;
  EXPECT_EQ(parse_train_config(j, "run.json").noise.overlay_damage_share, 0.25);
  j["noise"]["overlay_damage_share"] = -0.1;
  EXPECT_THAT(error_of(j), HasSubstr("field 'noise.overlay_damage_share': must be in [0"));
  j["noise"]["overlay_damage_share"] = "half";
  EXPECT_THAT(error_of(j), HasSubstr("field 'noise.overlay_damage_share'"));
}

// Note [Overlay repair]: the overlay's extra loss weight is optional (0) and bounded.
TEST(TrainConfig, OverlayWeightIsOptionalAndChecked) {
  nlohmann::json j = bundled_json();
  j["loss"] = {{"motion_weight", 0.0}, {"motion_threshold", 0.04}};
  EXPECT_EQ(parse_train_config(j, "run.json").loss.overlay_weight, 0.0);
  j["loss"]["overlay_weight"] = 5.0;
  EXPECT_EQ(parse_train_config(j, "run.json").loss.overlay_weight, 5.0);
  j["loss"]["overlay_weight"] = -1.0;
  EXPECT_THAT(error_of(j), HasSubstr("field 'loss.overlay_weight': must be in [0"));
}

// Note [Own token context]: the token configs parse, and the played share is optional and bounded.
TEST(TrainConfig, TokenOwnShareIsOptionalAndChecked) {
  const std::string dir = std::string(WORLDCAST_SOURCE_DIR) + "/assets/train/";
  EXPECT_EQ(load_train_config(dir + "game-tokens.json").tokens.own_share, 0.0);
  EXPECT_EQ(load_train_config(dir + "game-tokens-own.json").tokens.own_share, 0.5);
  std::ifstream in(dir + "game-tokens.json");
  nlohmann::json j = nlohmann::json::parse(in);
  j["tokens"]["own_share"] = 0.25;
  EXPECT_EQ(parse_train_config(j, "run.json").tokens.own_share, 0.25);
  j["tokens"]["own_share"] = 1.5;
  EXPECT_THAT(error_of(j), HasSubstr("field 'tokens.own_share': must be in [0"));
}

// Note [Drawn context]: the drawn share and its temperature are optional and bounded, and the
// played and drawn clips fit in the batch.
TEST(TrainConfig, TokenDrawnShareIsOptionalAndChecked) {
  const std::string dir = std::string(WORLDCAST_SOURCE_DIR) + "/assets/train/";
  const TrainConfig bundled = load_train_config(dir + "game-tokens.json");
  EXPECT_EQ(bundled.tokens.drawn_share, 0.0);
  EXPECT_EQ(bundled.tokens.drawn_temperature, 1.0);
  std::ifstream in(dir + "game-tokens.json");
  nlohmann::json j = nlohmann::json::parse(in);
  j["tokens"]["drawn_share"] = 0.5;
  j["tokens"]["drawn_temperature"] = 1.5;
  const TrainConfig c = parse_train_config(j, "run.json");
  EXPECT_EQ(c.tokens.drawn_share, 0.5);
  EXPECT_EQ(c.tokens.drawn_temperature, 1.5);
  j["tokens"]["drawn_temperature"] = 0.0;
  EXPECT_THAT(error_of(j), HasSubstr("field 'tokens.drawn_temperature': must be in ["));
  j["tokens"]["drawn_temperature"] = 1.0;
  j["tokens"]["own_share"] = 0.75;
  EXPECT_THAT(error_of(j), HasSubstr("field 'tokens.drawn_share': own_share and drawn_share"));
}

// Note [Deep rollout]: a lead is optional, bounded, and only the own rollout plays it.
TEST(TrainConfig, LeadNeedsTheOwnRollout) {
  nlohmann::json j = bundled_json();
  EXPECT_EQ(parse_train_config(j, "run.json").clips.lead_frames, 0);
  j["clips"]["lead_frames"] = 16;
  EXPECT_THAT(error_of(j), HasSubstr("field 'clips.lead_frames': a lead is only played by"));
  j["noise"]["own_context_share"] = 0.5;
  j["noise"]["own_context_source"] = "rollout";
  EXPECT_EQ(parse_train_config(j, "run.json").clips.lead_frames, 16);
  j["noise"]["own_context_share"] = 0.0;
  EXPECT_THAT(error_of(j), HasSubstr("field 'clips.lead_frames'"));
  j["noise"]["own_context_share"] = 0.5;
  j["clips"]["lead_frames"] = -1;
  EXPECT_THAT(error_of(j), HasSubstr("field 'clips.lead_frames': must be in [0"));
}

TEST(TrainConfig, LearningRateWarmsUpThenDecays) {
  TrainConfig c;
  c.learning_rate = 1.0;
  c.warmup_steps = 10;
  c.steps = 0;
  EXPECT_DOUBLE_EQ(learning_rate_at(c, 5), 0.5);
  EXPECT_DOUBLE_EQ(learning_rate_at(c, 1000), 1.0);
  c.steps = 110;
  EXPECT_DOUBLE_EQ(learning_rate_at(c, 10), 1.0);
  EXPECT_NEAR(learning_rate_at(c, 60), 0.55, 1e-12);
  EXPECT_NEAR(learning_rate_at(c, 110), 0.1, 1e-12);
  EXPECT_NEAR(learning_rate_at(c, 500), 0.1, 1e-12);
}

}  // namespace
}  // namespace wc::train
