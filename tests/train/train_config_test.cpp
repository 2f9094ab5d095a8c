// Training configs: the bundled one parses; every bad field is named; the learning-rate schedule.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <fstream>

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

TEST(TrainConfig, BundledConfigParses) {
  const TrainConfig c = load_train_config(kBundled);
  EXPECT_EQ(c.clips.width, 128);
  EXPECT_EQ(c.noise.dropped_action, 5);
  EXPECT_NE(c.model_config.find("assets/configs/game-small.json"), std::string::npos);
}

// The previous-frame skip, trained with own context (Notes [Previous-frame skip], [Own
// context]).
TEST(TrainConfig, SkipExperimentConfigParses) {
  const TrainConfig c =
      load_train_config(std::string(WORLDCAST_SOURCE_DIR) + "/assets/train/game-small-skip.json");
  EXPECT_EQ(c.noise.own_context_share, 0.5);
  const model::ModelConfig model = model::load_model_config(c.model_config);
  EXPECT_TRUE(model.prediction.previous_frame_skip);
  EXPECT_FALSE(model::load_model_config(load_train_config(kBundled).model_config)
                   .prediction.previous_frame_skip);
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

// The keys of the retired pixel training (a "loss" section, own rollouts with a lead, overlay
// damage, new-ground learning) are unknown now.
TEST(TrainConfig, RetiredPixelKeysAreRefused) {
  nlohmann::json j = bundled_json();
  j["loss"] = {{"motion_weight", 0.0}, {"motion_threshold", 0.04}};
  EXPECT_THAT(error_of(j), HasSubstr("field 'loss': unknown key"));
  j = bundled_json();
  j["learn"] = "all";
  EXPECT_THAT(error_of(j), HasSubstr("field 'learn': unknown key"));
  j = bundled_json();
  j["clips"]["lead_frames"] = 16;
  EXPECT_THAT(error_of(j), HasSubstr("field 'clips.lead_frames': unknown key"));
  for (const auto& [key, value] :
       {std::pair<std::string, nlohmann::json>{"own_context_source", "teacher_forced"},
        {"overlay_damage_share", 0.25}}) {
    j = bundled_json();
    j["noise"][key] = value;
    EXPECT_THAT(error_of(j), HasSubstr("field 'noise." + key + "': unknown key"));
  }
}

TEST(TrainConfig, OwnContextShareIsOptionalAndChecked) {
  nlohmann::json j = bundled_json();
  j["noise"].erase("own_context_share");
  EXPECT_EQ(parse_train_config(j, "run.json").noise.own_context_share, 0.0);
  j["noise"]["own_context_share"] = 0.25;
  EXPECT_EQ(parse_train_config(j, "run.json").noise.own_context_share, 0.25);
  j["noise"]["own_context_share"] = 1.5;
  EXPECT_THAT(error_of(j), HasSubstr("field 'noise.own_context_share': must be in [0"));
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

TEST(TrainConfig, AgentPushShareIsOptionalAndChecked) {
  const std::string dir = std::string(WORLDCAST_SOURCE_DIR) + "/assets/train/";
  EXPECT_EQ(load_train_config(dir + "game-tokens.json").clips.agent.push_share, 0.0);
  EXPECT_EQ(load_train_config(dir + "game-tiles.json").clips.agent.push_share, 0.5);
  std::ifstream in(dir + "game-tiles.json");
  nlohmann::json j = nlohmann::json::parse(in);
  j["clips"]["agent"]["push_share"] = 1.5;
  EXPECT_THAT(error_of(j), HasSubstr("field 'clips.agent.push_share': must be in ["));
  j["clips"]["agent"]["push_share"] = "half";
  EXPECT_THAT(error_of(j), HasSubstr("field 'clips.agent.push_share': expected a number"));
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
