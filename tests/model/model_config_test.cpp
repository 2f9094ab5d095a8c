// Config loading: the bundled configs parse, and every kind of bad input names file and field.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <utility>
#include <vector>

#include "engine/core/error.h"
#include "engine/model/model_config.h"
#include "tests/model/model_test_util.h"

namespace wc::model {
namespace {

using ::testing::HasSubstr;

std::string configs_dir() {
  return std::string(WORLDCAST_SOURCE_DIR) + "/assets/configs/";
}

std::string write_temp(const std::string& name, const std::string& text) {
  const auto path = std::filesystem::temp_directory_path() / ("wc_model_config_" + name);
  std::ofstream(path) << text;
  return path.string();
}

nlohmann::json game_small_json() {
  std::ifstream in(configs_dir() + "game-small.json");
  return nlohmann::json::parse(in);
}

TEST(ModelConfig, BundledGameSmallParses) {
  const ModelConfig c = load_model_config(configs_dir() + "game-small.json");
  EXPECT_EQ(c.name, "game-small");
  EXPECT_EQ(c.channels, 3);
  EXPECT_EQ(c.grid_h(c.frame), 16);
  EXPECT_EQ(c.grid_w(c.frame), 16);
  EXPECT_EQ(c.hidden, 192);
  EXPECT_EQ(c.layers, 8);
  EXPECT_EQ(c.heads * c.head_dim, c.hidden);
  // The game's five actions plus the dropped-action token of training.
  EXPECT_EQ(c.num_actions, 6);
  EXPECT_EQ(c.frames_per_block, 1);
}

TEST(ModelConfig, BundledWanParsesWithResolutions) {
  const ModelConfig c = load_model_config(configs_dir() + "wan2.1-1.3b.json");
  EXPECT_EQ(c.layers, 30);
  EXPECT_EQ(c.heads, 12);
  EXPECT_EQ(c.head_dim, 128);
  EXPECT_EQ(c.mlp, 8960);
  EXPECT_EQ(c.frames_per_block, 3);
  const FrameSize p480 = c.resolve("480p"), p720 = c.resolve("720p"), p1080 = c.resolve("1080p");
  EXPECT_EQ(c.grid_h(p480) * c.grid_w(p480), 30 * 52);
  EXPECT_EQ(c.grid_h(p720) * c.grid_w(p720), 45 * 80);
  EXPECT_EQ(c.grid_h(p1080) * c.grid_w(p1080), 68 * 120);
  EXPECT_THAT(testing::error_of([&] { c.resolve("4k"); }), HasSubstr("unknown resolution '4k'"));
  EXPECT_EQ(c.cross_attention.tokens, 512);
  EXPECT_EQ(c.cross_attention.width, 4096);
  // Parameter count of Wan 2.1 1.3B with its text cross-attention and text embedding (the text
  // encoder apart): about 1.4e9.
  int64_t params = 0;
  for (const TensorSpec& spec : model_tensor_specs(c, Dtype::kBF16)) {
    params += shape_numel(spec.shape).value();
  }
  EXPECT_GT(params, 1'300'000'000);
  EXPECT_LT(params, 1'500'000'000);
}

TEST(ModelConfig, RoundTripsThroughJson) {
  const ModelConfig c = load_model_config(configs_dir() + "wan2.1-1.3b.json");
  const ModelConfig again = parse_model_config(model_config_to_json(c), "again");
  EXPECT_EQ(model_config_to_json(again), model_config_to_json(c));
}

TEST(ModelConfig, MalformedJsonNamesFile) {
  const std::string path = write_temp("malformed.json", "{\"name\": \"x\",");
  const std::string error = testing::error_of([&] { load_model_config(path); });
  EXPECT_THAT(error, HasSubstr(path));
  EXPECT_THAT(error, HasSubstr("not valid JSON"));
}

TEST(ModelConfig, MissingFileNamesFile) {
  EXPECT_THAT(testing::error_of([] { load_model_config("/nonexistent/cfg.json"); }),
              HasSubstr("/nonexistent/cfg.json"));
}

// Note [Bounded reads]: a FIFO or a device named as a config is refused, never waited on.
TEST(ModelConfig, AConfigThatIsNoRegularFileIsRefusedWithoutBlocking) {
  const auto fifo = std::filesystem::temp_directory_path() /
                    ("wc_model_config_fifo_" + std::to_string(::getpid()));
  std::filesystem::remove(fifo);
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  EXPECT_THAT(testing::error_of([&] { load_model_config(fifo.string()); }),
              HasSubstr(fifo.string() + ": the model config must be a regular file"));
  std::filesystem::remove(fifo);
  EXPECT_THAT(testing::error_of([] { load_model_config("/dev/zero"); }),
              HasSubstr("/dev/zero: the model config must be a regular file"));
}

// Note [Config files]: a checkpoint's config names files inside the checkpoint's folder only;
// an absolute name, one that climbs out, and a link that leads out are refused by field before
// they are read. A config file may still name a file anywhere.
TEST(ModelConfig, ACheckpointsConfigNamesOnlyFilesInsideItsFolder) {
  namespace fs = std::filesystem;
  const fs::path root =
      fs::temp_directory_path() / ("wc_config_files_" + std::to_string(::getpid()));
  fs::remove_all(root);
  fs::create_directories(root / "ckpt" / "sub");
  fs::copy_file(configs_dir() + "game-tokens-codebook.txt", root / "ckpt" / "codebook.txt");
  fs::copy_file(configs_dir() + "game-tokens-codebook.txt", root / "outside.txt");
  fs::create_symlink(root / "outside.txt", root / "ckpt" / "link.txt");
  std::ifstream in(configs_dir() + "game-tokens.json");
  const nlohmann::json base = nlohmann::json::parse(in);
  const std::string checkpoint = (root / "ckpt").string();
  const auto with = [&](const std::string& name) {
    nlohmann::json json = base;
    json["tokens"]["codebook"] = name;
    return json;
  };
  const auto parse = [&](const std::string& name) {
    return parse_checkpoint_config(with(name), "ckpt (metadata)", checkpoint);
  };
  for (const char* inside : {"codebook.txt", "./codebook.txt", "sub/../codebook.txt"}) {
    EXPECT_EQ(parse(inside).tokens.codebook->size(), 4096) << inside;
  }
  const std::vector<std::pair<std::string, std::string>> refused = {
      {"/etc/passwd", "is not a relative name"},
      {(root / "outside.txt").string(), "is not a relative name"},
      {"../outside.txt", "leaves it"},
      {"sub/../../outside.txt", "leaves it"},
      {"link.txt", "leads outside it"},
      {"", "is not a relative name"}};
  for (const auto& [name, why] : refused) {
    const std::string error = testing::error_of([&] { parse(name); });
    EXPECT_THAT(error, HasSubstr("field 'tokens.codebook'")) << name;
    EXPECT_THAT(error, HasSubstr(why)) << name;
  }
  // A config file (not confined) may name any file.
  EXPECT_EQ(parse_model_config(with((root / "outside.txt").string()), "x.json").tokens.vocab, 4096);
  fs::remove_all(root);
}

TEST(ModelConfig, UnknownKeyIsRejected) {
  nlohmann::json json = game_small_json();
  json["hiden"] = 12;
  const std::string path = write_temp("unknown.json", json.dump());
  const std::string error = testing::error_of([&] { load_model_config(path); });
  EXPECT_THAT(error, HasSubstr(path));
  EXPECT_THAT(error, HasSubstr("field 'hiden': unknown key"));
}

TEST(ModelConfig, UnknownNestedKeyIsRejected) {
  nlohmann::json json = game_small_json();
  json["sampler"]["stepz"] = 2;
  EXPECT_THAT(testing::error_of([&] { parse_model_config(json, "cfg.json"); }),
              HasSubstr("cfg.json: field 'sampler.stepz': unknown key"));
}

TEST(ModelConfig, ActionGuidanceNeedsADroppedActionBelowNumActions) {
  nlohmann::json json = game_small_json();
  json["sampler"]["action_guidance"] = 2.0;
  EXPECT_THAT(testing::error_of([&] { parse_model_config(json, "cfg.json"); }),
              HasSubstr("cfg.json: field 'sampler.dropped_action': is required"));
  json["sampler"]["dropped_action"] = json["num_actions"];
  EXPECT_THAT(testing::error_of([&] { parse_model_config(json, "cfg.json"); }),
              HasSubstr("cfg.json: field 'sampler.dropped_action': must be below num_actions"));
  json["sampler"]["dropped_action"] = 0;
  json["sampler"]["action_guidance_steps"] = 1;
  const ModelConfig c = parse_model_config(json, "cfg.json");
  EXPECT_EQ(c.sampler.action_guidance, 2.0);
  EXPECT_EQ(c.sampler.action_guidance_steps, 1);
  const ModelConfig again = parse_model_config(model_config_to_json(c), "again");
  EXPECT_EQ(model_config_to_json(again), model_config_to_json(c));
  json["sampler"]["action_guidance"] = -1.0;
  EXPECT_THAT(testing::error_of([&] { parse_model_config(json, "cfg.json"); }),
              HasSubstr("field 'sampler.action_guidance': must be in"));
}

// Note [Previous-frame skip]: on when the config has "prediction", off (plain velocity) without,
// written back only when on, and a bad value names its field.
TEST(ModelConfig, PreviousFrameSkipParsesRoundTripsAndNamesBadFields) {
  nlohmann::json json = game_small_json();
  json.erase("prediction");
  const ModelConfig plain = parse_model_config(json, "cfg.json");
  EXPECT_FALSE(plain.prediction.previous_frame_skip);
  EXPECT_FALSE(model_config_to_json(plain).contains("prediction"));
  json["prediction"] = {{"reference", "previous_frame"}, {"spread", 0.25}};
  const ModelConfig skip = parse_model_config(json, "cfg.json");
  EXPECT_TRUE(skip.prediction.previous_frame_skip);
  EXPECT_EQ(skip.prediction.spread, 0.25);
  const ModelConfig again = parse_model_config(model_config_to_json(skip), "again");
  EXPECT_TRUE(again.prediction.previous_frame_skip);
  EXPECT_EQ(again.prediction.spread, 0.25);
  json["prediction"]["reference"] = "sink";
  EXPECT_THAT(testing::error_of([&] { parse_model_config(json, "cfg.json"); }),
              HasSubstr("cfg.json: field 'prediction.reference': must be \"previous_frame\""));
  json["prediction"]["reference"] = "previous_frame";
  json["prediction"]["spread"] = 0.0;
  EXPECT_THAT(testing::error_of([&] { parse_model_config(json, "cfg.json"); }),
              HasSubstr("cfg.json: field 'prediction.spread': must be in"));
  json["prediction"] = {{"reference", "previous_frame"}};
  EXPECT_THAT(testing::error_of([&] { parse_model_config(json, "cfg.json"); }),
              HasSubstr("cfg.json: field 'prediction.spread': missing"));
  json["prediction"] = {{"reference", "previous_frame"}, {"spread", 0.5}, {"sprad", 1}};
  EXPECT_THAT(testing::error_of([&] { parse_model_config(json, "cfg.json"); }),
              HasSubstr("prediction.sprad"));
}

// Note [Moved reference]: off unless asked, written back when on, and the head grows by the five
// logits per pixel (in the tensor spec, which checkpoints are checked against).
TEST(ModelConfig, MovedReferenceParsesRoundTripsAndWidensTheHead) {
  nlohmann::json json = game_small_json();
  json["prediction"] = {{"reference", "previous_frame"}, {"spread", 0.5}};
  const ModelConfig still = parse_model_config(json, "cfg.json");
  EXPECT_EQ(still.prediction.move_pixels, 0);
  EXPECT_EQ(still.output_channels(), still.channels);
  EXPECT_FALSE(model_config_to_json(still)["prediction"].contains("move_pixels"));
  json["prediction"]["move_pixels"] = 8;
  const ModelConfig moved = parse_model_config(json, "cfg.json");
  EXPECT_EQ(moved.prediction.move_pixels, 8);
  EXPECT_EQ(moved.output_channels(), moved.channels + 5);
  EXPECT_EQ(parse_model_config(model_config_to_json(moved), "again").prediction.move_pixels, 8);
  bool found = false;
  for (const TensorSpec& spec : model_tensor_specs(moved, Dtype::kF32)) {
    if (spec.name != "head.proj.weight") continue;
    found = true;
    EXPECT_EQ(spec.shape[0], int64_t{moved.channels + 5} * moved.patch_h * moved.patch_w);
  }
  EXPECT_TRUE(found);
  using MoveChoice = PredictionConfig::MoveChoice;
  EXPECT_EQ(moved.prediction.move_choice, MoveChoice::kMix);
  for (const auto& [name, choice] :
       {std::pair{"sharpest", MoveChoice::kSharpest}, {"sample", MoveChoice::kSample}}) {
    json["prediction"]["move_choice"] = name;
    const ModelConfig chosen = parse_model_config(json, "cfg.json");
    EXPECT_EQ(chosen.prediction.move_choice, choice) << name;
    EXPECT_EQ(parse_model_config(model_config_to_json(chosen), "again").prediction.move_choice,
              choice)
        << name;
  }
  json["prediction"]["move_choice"] = "best";
  EXPECT_THAT(
      testing::error_of([&] { parse_model_config(json, "cfg.json"); }),
      HasSubstr(
          "cfg.json: field 'prediction.move_choice': must be \"mix\", \"sharpest\", \"sample\" or "
          "\"new_ground\""));
  json["prediction"]["move_choice"] = "mix";
  json["prediction"].erase("move_pixels");
  EXPECT_THAT(testing::error_of([&] { parse_model_config(json, "cfg.json"); }),
              HasSubstr("cfg.json: field 'prediction.move_choice': needs move_pixels"));
  json["prediction"]["move_pixels"] = 0;
  EXPECT_THAT(testing::error_of([&] { parse_model_config(json, "cfg.json"); }),
              HasSubstr("cfg.json: field 'prediction.move_pixels': must be in"));
}

// Note [Painted pixels]: one choice per palette colour after the moves, so the head grows by the
// palette's size; written back only when on; refused without moves or without a palette.
TEST(ModelConfig, PaintAddsAChoicePerPaletteColour) {
  nlohmann::json json = game_small_json();
  json["prediction"] = {{"reference", "previous_frame"},
                        {"spread", 0.5},
                        {"move_pixels", 8},
                        {"move_choice", "sample"},
                        {"paint", true}};
  json["palette"] = {{"colours", {"#000000", "#ffffff", "#62b24a"}}, {"snap", true}};
  const ModelConfig painted = parse_model_config(json, "cfg.json");
  EXPECT_EQ(painted.prediction.paint_colours, 3);
  EXPECT_EQ(painted.output_channels(), painted.channels + 5 + 3);
  const nlohmann::json again = model_config_to_json(painted);
  EXPECT_EQ(again["prediction"]["paint"], true);
  EXPECT_EQ(parse_model_config(again, "again").prediction.paint_colours, 3);
  // Note [Choice temperature]: written back with a sampled choice, refused without one.
  EXPECT_EQ(again["prediction"]["choice_temperature"], 1.0);
  EXPECT_EQ(again["prediction"]["choice_floor"], 0.0);
  json["prediction"]["choice_temperature"] = 0.5;
  json["prediction"]["choice_floor"] = 0.1;
  const ModelConfig shaped = parse_model_config(json, "cfg.json");
  EXPECT_EQ(shaped.prediction.choice_temperature, 0.5);
  EXPECT_EQ(parse_model_config(model_config_to_json(shaped), "again").prediction.choice_floor, 0.1);
  EXPECT_FALSE(shaped.prediction.draw_per_patch);
  json["prediction"]["draw_per_patch"] = true;
  EXPECT_TRUE(
      parse_model_config(model_config_to_json(parse_model_config(json, "cfg.json")), "again")
          .prediction.draw_per_patch);
  json["prediction"]["choice_floor"] = 1.5;
  EXPECT_THAT(testing::error_of([&] { parse_model_config(json, "cfg.json"); }),
              HasSubstr("cfg.json: field 'prediction.choice_floor': must be in"));
  json["prediction"]["choice_floor"] = 0.1;
  json["prediction"]["move_choice"] = "sharpest";
  EXPECT_THAT(testing::error_of([&] { parse_model_config(json, "cfg.json"); }),
              HasSubstr("cfg.json: field 'prediction.choice_temperature': needs move_choice "
                        "\"sample\" or \"new_ground\""));
  json["prediction"].erase("choice_temperature");
  json["prediction"].erase("choice_floor");
  EXPECT_THAT(testing::error_of([&] { parse_model_config(json, "cfg.json"); }),
              HasSubstr("cfg.json: field 'prediction.draw_per_patch': needs move_choice"));
  json["prediction"].erase("draw_per_patch");
  json["prediction"]["paint"] = false;
  EXPECT_EQ(parse_model_config(json, "cfg.json").output_channels(), painted.channels + 5);
  EXPECT_FALSE(
      model_config_to_json(parse_model_config(json, "cfg.json"))["prediction"].contains("paint"));
  json["prediction"]["paint"] = true;
  json.erase("palette");
  EXPECT_THAT(testing::error_of([&] { parse_model_config(json, "cfg.json"); }),
              HasSubstr("cfg.json: field 'prediction.paint': needs the model's palette"));
  json["prediction"].erase("move_pixels");
  json["prediction"].erase("move_choice");
  EXPECT_THAT(testing::error_of([&] { parse_model_config(json, "cfg.json"); }),
              HasSubstr("cfg.json: field 'prediction.paint': needs move_pixels"));
}

// Note [New ground]: read and written back with its shaping; refused without paint choices.
TEST(ModelConfig, NewGroundDrawsAmongPaintsAndNeedsThem) {
  nlohmann::json json = game_small_json();
  json["prediction"] = {{"reference", "previous_frame"},
                        {"spread", 0.5},
                        {"move_pixels", 8},
                        {"move_choice", "new_ground"},
                        {"choice_temperature", 0.5},
                        {"paint", true}};
  json["palette"] = {{"colours", {"#000000", "#ffffff", "#62b24a"}}, {"snap", true}};
  const ModelConfig config = parse_model_config(json, "cfg.json");
  EXPECT_EQ(config.prediction.move_choice, PredictionConfig::MoveChoice::kNewGround);
  EXPECT_TRUE(config.prediction.drawn());
  const nlohmann::json again = model_config_to_json(config);
  EXPECT_EQ(again["prediction"]["move_choice"], "new_ground");
  EXPECT_EQ(parse_model_config(again, "again").prediction.choice_temperature, 0.5);
  json["prediction"]["paint"] = false;
  EXPECT_THAT(testing::error_of([&] { parse_model_config(json, "cfg.json"); }),
              HasSubstr("cfg.json: field 'prediction.move_choice': \"new_ground\" draws new "
                        "ground among paint choices: needs \"paint\": true"));
  json["prediction"]["move_choice"] = "newground";
  EXPECT_THAT(testing::error_of([&] { parse_model_config(json, "cfg.json"); }),
              HasSubstr("field 'prediction.move_choice': must be \"mix\", \"sharpest\", "
                        "\"sample\" or \"new_ground\""));
  // The bundled model plays new ground with its 26 paint colours.
  const ModelConfig bundled = load_model_config(std::string(WORLDCAST_SOURCE_DIR) +
                                                "/assets/models/game-small-moves/config.json");
  EXPECT_EQ(bundled.prediction.move_choice, PredictionConfig::MoveChoice::kNewGround);
  EXPECT_EQ(bundled.prediction.paint_colours, 26);
  // Remembered ground is off by default; turned on, it lasts 128 frames (Note [World memory]).
  EXPECT_FALSE(bundled.prediction.remember_ground);
  EXPECT_EQ(bundled.prediction.remember_frames, 128);
}

// Note [Uncovered ground]: read and written back; refused for any choice but new ground.
TEST(ModelConfig, UncoveredGroundIsPartOfNewGround) {
  nlohmann::json json = game_small_json();
  json["prediction"] = {
      {"reference", "previous_frame"}, {"spread", 0.5}, {"move_pixels", 8},
      {"move_choice", "new_ground"},   {"paint", true}, {"uncovered_ground", true}};
  json["palette"] = {{"colours", {"#000000", "#ffffff"}}, {"snap", true}};
  const ModelConfig config = parse_model_config(json, "cfg.json");
  EXPECT_TRUE(config.prediction.uncovered_ground);
  EXPECT_TRUE(
      parse_model_config(model_config_to_json(config), "again").prediction.uncovered_ground);
  json["prediction"]["uncovered_ground"] = "yes";
  EXPECT_THAT(testing::error_of([&] { parse_model_config(json, "cfg.json"); }),
              HasSubstr("cfg.json: field 'prediction.uncovered_ground'"));
  json["prediction"]["uncovered_ground"] = true;
  json["prediction"]["move_choice"] = "sample";
  EXPECT_THAT(testing::error_of([&] { parse_model_config(json, "cfg.json"); }),
              HasSubstr("cfg.json: field 'prediction.uncovered_ground': needs move_choice "
                        "\"new_ground\""));
}

// Note [Remembered ground]: read and written back (only when on); refused for any choice but new
// ground, and with uncovered ground; a command line's on, off and config.
TEST(ModelConfig, RememberedGroundIsPartOfNewGround) {
  nlohmann::json json = game_small_json();
  json["prediction"] = {
      {"reference", "previous_frame"}, {"spread", 0.5}, {"move_pixels", 8},
      {"move_choice", "new_ground"},   {"paint", true}, {"remember_ground", true}};
  json["palette"] = {{"colours", {"#000000", "#ffffff"}}, {"snap", true}};
  ModelConfig config = parse_model_config(json, "cfg.json");
  EXPECT_TRUE(config.prediction.remember_ground);
  EXPECT_TRUE(parse_model_config(model_config_to_json(config), "again").prediction.remember_ground);
  apply_remember_ground(config, "off", "--remember-ground");
  EXPECT_FALSE(config.prediction.remember_ground);
  EXPECT_FALSE(model_config_to_json(config)["prediction"].contains("remember_ground"));
  apply_remember_ground(config, "config", "--remember-ground");
  EXPECT_FALSE(config.prediction.remember_ground);
  apply_remember_ground(config, "on", "--remember-ground");
  EXPECT_TRUE(config.prediction.remember_ground);
  EXPECT_THAT(testing::error_of([&] { apply_remember_ground(config, "yes", "--remember-ground"); }),
              HasSubstr("--remember-ground: must be on, off or config, got 'yes'"));

  json["prediction"]["remember_ground"] = 1;
  EXPECT_THAT(testing::error_of([&] { parse_model_config(json, "cfg.json"); }),
              HasSubstr("cfg.json: field 'prediction.remember_ground'"));
  json["prediction"]["remember_ground"] = true;
  json["prediction"]["uncovered_ground"] = true;
  EXPECT_THAT(testing::error_of([&] { parse_model_config(json, "cfg.json"); }),
              HasSubstr("cfg.json: field 'prediction.remember_ground': needs move_choice "
                        "\"new_ground\" without uncovered_ground"));
  json["prediction"].erase("uncovered_ground");
  json["prediction"]["move_choice"] = "sharpest";
  json["prediction"].erase("paint");
  EXPECT_THAT(testing::error_of([&] { parse_model_config(json, "cfg.json"); }),
              HasSubstr("field 'prediction.remember_ground'"));
  json["prediction"].erase("remember_ground");
  ModelConfig sharpest = parse_model_config(json, "cfg.json");
  apply_remember_ground(sharpest, "off", "--remember-ground");
  EXPECT_THAT(
      testing::error_of([&] { apply_remember_ground(sharpest, "on", "--remember-ground"); }),
      HasSubstr("cannot remember ground"));
}

// Note [World memory]: how long a remembered cell lasts, read and written back (only when set);
// refused when negative or not a whole number.
TEST(ModelConfig, RememberFramesIsAWholeNumberOfFrames) {
  nlohmann::json json = game_small_json();
  json["prediction"] = {{"reference", "previous_frame"},
                        {"spread", 0.5},
                        {"move_pixels", 8},
                        {"move_choice", "new_ground"},
                        {"remember_ground", true},
                        {"remember_frames", 300},
                        {"paint", true}};
  json["palette"] = {{"colours", {"#000000", "#ffffff"}}, {"snap", true}};
  const ModelConfig config = parse_model_config(json, "cfg.json");
  EXPECT_EQ(config.prediction.remember_frames, 300);
  EXPECT_EQ(parse_model_config(model_config_to_json(config), "again").prediction.remember_frames,
            300);
  json["prediction"].erase("remember_frames");
  const ModelConfig lasting = parse_model_config(json, "cfg.json");
  EXPECT_EQ(lasting.prediction.remember_frames, 0);
  EXPECT_FALSE(model_config_to_json(lasting)["prediction"].contains("remember_frames"));
  for (const nlohmann::json& bad : {nlohmann::json(-1), nlohmann::json(2.5), nlohmann::json("x")}) {
    json["prediction"]["remember_frames"] = bad;
    EXPECT_THAT(testing::error_of([&] { parse_model_config(json, "cfg.json"); }),
                HasSubstr("cfg.json: field 'prediction.remember_frames'"))
        << bad;
  }
}

// Note [Stay bias]: read and written back; refused for a mixed or drawn choice and out of range.
TEST(ModelConfig, StayBiasNeedsTheLikeliestMove) {
  nlohmann::json json = game_small_json();
  json["prediction"] = {{"reference", "previous_frame"},
                        {"spread", 0.5},
                        {"move_pixels", 8},
                        {"move_choice", "sharpest"},
                        {"stay_bias", 0.75}};
  const ModelConfig config = parse_model_config(json, "cfg.json");
  EXPECT_EQ(config.prediction.stay_bias, 0.75);
  EXPECT_EQ(parse_model_config(model_config_to_json(config), "again").prediction.stay_bias, 0.75);
  json["prediction"]["stay_bias"] = -1;
  EXPECT_THAT(testing::error_of([&] { parse_model_config(json, "cfg.json"); }),
              HasSubstr("cfg.json: field 'prediction.stay_bias'"));
  json["prediction"]["stay_bias"] = 0.5;
  json["prediction"]["move_choice"] = "mix";
  EXPECT_THAT(testing::error_of([&] { parse_model_config(json, "cfg.json"); }),
              HasSubstr("cfg.json: field 'prediction.stay_bias': needs move_choice "
                        "\"sharpest\" or \"new_ground\""));
}

// Note [Palette snap]: absent unless surveyed, "#rrggbb" colours read and written back, snap off
// keeps the colours but plays without them, and each bad colour is named by its index.
TEST(ModelConfig, PaletteParsesRoundTripsAndNamesBadColours) {
  nlohmann::json json = game_small_json();
  EXPECT_FALSE(parse_model_config(json, "cfg.json").palette.active());
  json["palette"] = {{"colours", {"#62b24a", "#FFFFFF", "#000000"}}, {"snap", true}};
  const ModelConfig with = parse_model_config(json, "cfg.json");
  ASSERT_EQ(with.palette.colours.size(), 3u);
  EXPECT_EQ(with.palette.colours[0], (std::array<uint8_t, 3>{98, 178, 74}));
  EXPECT_EQ(with.palette.colours[1], (std::array<uint8_t, 3>{255, 255, 255}));
  EXPECT_TRUE(with.palette.active());
  const nlohmann::json written = model_config_to_json(with);
  EXPECT_EQ(written["palette"]["colours"][1], "#ffffff");
  EXPECT_EQ(parse_model_config(written, "again").palette.colours, with.palette.colours);
  json["palette"]["snap"] = false;
  const ModelConfig off = parse_model_config(json, "cfg.json");
  EXPECT_EQ(off.palette.colours.size(), 3u);
  EXPECT_FALSE(off.palette.active());
  EXPECT_FALSE(parse_model_config(model_config_to_json(off), "again").palette.snap);
  const auto error_with = [&](const nlohmann::json& palette) {
    nlohmann::json bad = json;
    bad["palette"] = palette;
    return testing::error_of([&] { parse_model_config(bad, "cfg.json"); });
  };
  EXPECT_THAT(error_with({{"colours", {"#62b24a", "#12345g"}}, {"snap", true}}),
              HasSubstr("cfg.json: field 'palette.colours[1]': expected a colour \"#rrggbb\""));
  EXPECT_THAT(error_with({{"colours", {"62b24a0"}}, {"snap", true}}),
              HasSubstr("field 'palette.colours[0]'"));
  EXPECT_THAT(error_with({{"colours", {{98, 178, 74}}}, {"snap", true}}),
              HasSubstr("field 'palette.colours[0]'"));
  EXPECT_THAT(error_with({{"colours", nlohmann::json::array()}, {"snap", true}}),
              HasSubstr("field 'palette.colours': expected an array of 1 to 256"));
  EXPECT_THAT(error_with({{"colours", {"#62b24a"}}}), HasSubstr("field 'palette.snap': missing"));
  EXPECT_THAT(error_with({{"colours", {"#62b24a"}}, {"snap", true}, {"snapp", 1}}),
              HasSubstr("field 'palette.snapp': unknown key"));
  nlohmann::json grey = json;
  grey["channels"] = 1;
  EXPECT_THAT(testing::error_of([&] { parse_model_config(grey, "cfg.json"); }),
              HasSubstr("field 'palette': needs a frame of 3 channels"));
}

// Note [TempCache bounded by default]: the model's dense window is TempCache's budget unless the
// caller or the config sets a limit; "budget": 0 stays unbounded.
TEST(ModelConfig, TempCacheTakesTheDenseWindowAsItsDefaultBudget) {
  nlohmann::json json = game_small_json();
  EXPECT_EQ(parse_model_config(json, "cfg.json").policy_settings("tempcache", {{"tau", 0.8}}),
            (nlohmann::json{{"tau", 0.8}}));  // no dense window: the policy's own default
  json["policies"] = {{"dense", {{"window", 12}}}};
  const ModelConfig with = parse_model_config(json, "cfg.json");
  EXPECT_EQ(with.policy_settings("tempcache", {{"tau", 0.8}}),
            (nlohmann::json{{"tau", 0.8}, {"budget_frames", 12}}));
  EXPECT_EQ(with.policy_settings("tempcache", {{"budget", 0}}), (nlohmann::json{{"budget", 0}}));
  EXPECT_EQ(with.policy_settings("tempcache", {{"window", 4}}), (nlohmann::json{{"window", 4}}));
  EXPECT_EQ(with.policy_settings("dense", nlohmann::json::object()),
            (nlohmann::json{{"window", 12}}));
}

// Note [Model policy settings]: a model's own policy settings parse, round-trip, sit under the
// caller's keys, and a bad policy name, a non-object or a key the policy rejects is named.
TEST(ModelConfig, PolicySettingsParseMergeAndNameBadEntries) {
  nlohmann::json json = game_small_json();
  EXPECT_EQ(parse_model_config(json, "cfg.json").policy_settings("headcast", {{"window", 9}}),
            (nlohmann::json{{"window", 9}}));
  json["policies"] = {{"headcast", {{"theta_dummy", 0.98}, {"theta_sink", 0.98}}}};
  const ModelConfig with = parse_model_config(json, "cfg.json");
  EXPECT_EQ(with.policy_settings("headcast", nlohmann::json::object()),
            (nlohmann::json{{"theta_dummy", 0.98}, {"theta_sink", 0.98}}));
  EXPECT_EQ(with.policy_settings("headcast", {{"theta_dummy", 0.9}, {"window", 9}}),
            (nlohmann::json{{"theta_dummy", 0.9}, {"theta_sink", 0.98}, {"window", 9}}));
  EXPECT_EQ(with.policy_settings("dense", nlohmann::json(nullptr)), nlohmann::json::object());
  EXPECT_EQ(parse_model_config(model_config_to_json(with), "again").policies, with.policies);
  const auto error_with = [&](const nlohmann::json& policies) {
    nlohmann::json bad = json;
    bad["policies"] = policies;
    return testing::error_of([&] { parse_model_config(bad, "cfg.json"); });
  };
  EXPECT_THAT(error_with({{"headcats", nlohmann::json::object()}}),
              HasSubstr("cfg.json: field 'policies.headcats': "));
  EXPECT_THAT(error_with({{"headcast", 0.98}}),
              HasSubstr("cfg.json: field 'policies.headcast': expected an object"));
  EXPECT_THAT(error_with({{"headcast", {{"theta_dumy", 0.98}}}}),
              HasSubstr("cfg.json: field 'policies.headcast': "));
  EXPECT_THAT(error_with({{"headcast", {{"theta_dumy", 0.98}}}}), HasSubstr("theta_dumy"));
  EXPECT_THAT(error_with({{"headcast", {{"spatial_proxy", "box"}}}}), HasSubstr("spatial_proxy"));
  EXPECT_THAT(error_with(nlohmann::json::array()),
              HasSubstr("cfg.json: field 'policies': expected an object"));
}

// Note [Model policy settings]: default_policy names the policy play and eval run unasked.
TEST(ModelConfig, DefaultPolicyIsDenseUnlessNamedAndMustBeKnown) {
  nlohmann::json json = game_small_json();
  EXPECT_EQ(parse_model_config(json, "cfg.json").default_policy, "dense");
  EXPECT_FALSE(
      model_config_to_json(parse_model_config(json, "cfg.json")).contains("default_policy"));
  json["default_policy"] = "headcast";
  const ModelConfig named = parse_model_config(json, "cfg.json");
  EXPECT_EQ(named.default_policy, "headcast");
  EXPECT_EQ(parse_model_config(model_config_to_json(named), "again").default_policy, "headcast");
  json["default_policy"] = "headcats";
  EXPECT_THAT(testing::error_of([&] { parse_model_config(json, "cfg.json"); }),
              HasSubstr("cfg.json: field 'default_policy': unknown policy 'headcats'"));
  json["default_policy"] = 3;
  EXPECT_THAT(testing::error_of([&] { parse_model_config(json, "cfg.json"); }),
              HasSubstr("cfg.json: field 'default_policy'"));
}

TEST(ModelConfig, MissingFieldIsNamed) {
  nlohmann::json json = game_small_json();
  json.erase("layers");
  EXPECT_THAT(testing::error_of([&] { parse_model_config(json, "cfg.json"); }),
              HasSubstr("cfg.json: field 'layers': missing"));
  json = game_small_json();
  json["frame"].erase("width");
  EXPECT_THAT(testing::error_of([&] { parse_model_config(json, "cfg.json"); }),
              HasSubstr("field 'frame.width': missing"));
}

TEST(ModelConfig, WrongTypesAreNamed) {
  nlohmann::json json = game_small_json();
  json["heads"] = "four";
  EXPECT_THAT(testing::error_of([&] { parse_model_config(json, "cfg.json"); }),
              HasSubstr("field 'heads': expected an integer"));
  json = game_small_json();
  json["sampler"]["shift"] = "big";
  EXPECT_THAT(testing::error_of([&] { parse_model_config(json, "cfg.json"); }),
              HasSubstr("field 'sampler.shift': expected a number"));
  json = game_small_json();
  json["patch"] = {1, 8};
  EXPECT_THAT(testing::error_of([&] { parse_model_config(json, "cfg.json"); }),
              HasSubstr("field 'patch': expected an array of 3 integers"));
  json = game_small_json();
  json = nlohmann::json::array();
  EXPECT_THAT(testing::error_of([&] { parse_model_config(json, "cfg.json"); }),
              HasSubstr("expected an object"));
}

TEST(ModelConfig, InconsistentValuesAreNamed) {
  nlohmann::json json = game_small_json();
  json["hidden"] = 300;
  EXPECT_THAT(testing::error_of([&] { parse_model_config(json, "cfg.json"); }),
              HasSubstr("field 'hidden': must equal heads * head_dim"));
  json = game_small_json();
  json["frame"]["height"] = 130;
  EXPECT_THAT(testing::error_of([&] { parse_model_config(json, "cfg.json"); }),
              HasSubstr("field 'frame'"));
  json = game_small_json();
  json["sampler"]["steps"] = 0;
  EXPECT_THAT(testing::error_of([&] { parse_model_config(json, "cfg.json"); }),
              HasSubstr("field 'sampler.steps': must be in [1, 64], got 0"));
  json = game_small_json();
  json["autoencoder"] = nlohmann::json::object();
  EXPECT_THAT(testing::error_of([&] { parse_model_config(json, "cfg.json"); }),
              HasSubstr("field 'autoencoder'"));
  json = game_small_json();
  json["patch"] = {2, 8, 8};
  EXPECT_THAT(testing::error_of([&] { parse_model_config(json, "cfg.json"); }),
              HasSubstr("field 'patch[0]'"));
}

// Note [Patch snap]: the config names a book beside it (read with the config, relative to its
// folder), round-trips, and a missing book, another palette or frame size, or a bad field is
// named; --patch-snap turns it on or off.
TEST(ModelConfig, PatchSnapReadsTheBookBesideTheConfig) {
  namespace fs = std::filesystem;
  const fs::path folder = fs::path(::testing::TempDir()) / "wc_patch_snap_config";
  fs::create_directories(folder);
  nlohmann::json json = game_small_json();
  json["palette"] = {{"colours", {"#62b24a", "#ffffff", "#000000"}}, {"snap", true}};
  const int width = json["frame"]["width"], height = json["frame"]["height"];
  PatchBook book;
  book.size = 8;
  book.frame_width = width;
  book.frame_height = height;
  book.colours = 3;
  book.patches = {std::vector<uint8_t>(64, 0), std::vector<uint8_t>(64, 1)};
  book.cells = {{}, {0, 1}};
  write_patch_book((folder / "patches.txt").string(), book);
  json["patch_snap"] = {{"file", "patches.txt"},   {"max_changed", 6},
                        {"fixed_max_changed", 64}, {"hold", 1},
                        {"fixed_hold", 4},         {"snap", true}};
  const std::string path = (folder / "config.json").string();
  std::ofstream(path) << json.dump(2);

  ModelConfig config = load_model_config(path);
  ASSERT_NE(config.patch_snap.book, nullptr);
  EXPECT_TRUE(config.patch_snap.active());
  EXPECT_EQ(config.patch_snap.limits.max_changed, 6);
  EXPECT_EQ(config.patch_snap.limits.fixed_max_changed, 64);
  EXPECT_EQ(config.patch_snap.limits.fixed_hold, 4);
  EXPECT_EQ(config.patch_snap.limits.hold, 1);
  EXPECT_EQ(config.patch_snap.book->patches, book.patches);
  EXPECT_EQ(config.patch_snap.book->cells, book.cells);
  const nlohmann::json written = model_config_to_json(config);
  EXPECT_EQ(written["patch_snap"]["file"], "patches.txt");
  EXPECT_EQ(parse_model_config(written, path).patch_snap.limits.max_changed, 6);
  apply_patch_snap(config, "off", "--patch-snap");
  EXPECT_FALSE(config.patch_snap.active());
  apply_patch_snap(config, "config", "--patch-snap");
  EXPECT_FALSE(config.patch_snap.active());
  apply_patch_snap(config, "on", "--patch-snap");
  EXPECT_TRUE(config.patch_snap.active());
  EXPECT_THAT(testing::error_of([&] { apply_patch_snap(config, "yes", "--patch-snap"); }),
              HasSubstr("--patch-snap: must be on, off or config"));
  ModelConfig none = parse_model_config(game_small_json(), "plain.json");
  EXPECT_THAT(testing::error_of([&] { apply_patch_snap(none, "on", "--patch-snap"); }),
              HasSubstr("plain.json names no patch book"));

  const auto error_with = [&](const nlohmann::json& patch_snap, const nlohmann::json& palette) {
    nlohmann::json bad = json;
    bad["patch_snap"] = patch_snap;
    if (palette.is_null()) {
      bad.erase("palette");
    } else {
      bad["palette"] = palette;
    }
    return testing::error_of([&] { parse_model_config(bad, path); });
  };
  const nlohmann::json palette = json["palette"];
  EXPECT_THAT(error_with({{"file", "nothing.txt"},
                          {"max_changed", 6},
                          {"fixed_max_changed", 64},
                          {"hold", 1},
                          {"fixed_hold", 4},
                          {"snap", true}},
                         palette),
              HasSubstr("field 'patch_snap.file': " + (folder / "nothing.txt").string()));
  EXPECT_THAT(error_with({{"file", "patches.txt"},
                          {"max_changed", 65},
                          {"fixed_max_changed", 64},
                          {"hold", 1},
                          {"fixed_hold", 4},
                          {"snap", true}},
                         palette),
              HasSubstr("field 'patch_snap.max_changed'"));
  EXPECT_THAT(error_with({{"file", "patches.txt"}, {"max_changed", 6}, {"snap", true}}, palette),
              HasSubstr("field 'patch_snap.fixed_max_changed': missing"));
  EXPECT_THAT(error_with({{"file", "patches.txt"},
                          {"max_changed", 6},
                          {"fixed_max_changed", 65},
                          {"hold", 1},
                          {"fixed_hold", 4},
                          {"snap", true}},
                         palette),
              HasSubstr("field 'patch_snap.fixed_max_changed': must be at most the book's 64"));
  EXPECT_THAT(error_with(json["patch_snap"], nullptr),
              HasSubstr("field 'patch_snap': needs the model's palette"));
  EXPECT_THAT(error_with(json["patch_snap"], {{"colours", {"#62b24a", "#ffffff"}}, {"snap", true}}),
              HasSubstr("is of a palette of 3 colours, the config's has 2"));
  book.frame_width = width * 2;
  write_patch_book((folder / "wide.txt").string(), book);
  EXPECT_THAT(error_with({{"file", "wide.txt"},
                          {"max_changed", 6},
                          {"fixed_max_changed", 64},
                          {"hold", 1},
                          {"fixed_hold", 4},
                          {"snap", true}},
                         palette),
              HasSubstr("frames, the config's are"));
  std::ofstream(folder / "broken.txt") << "worldcast patch book 1\nsize 8 frame";
  EXPECT_THAT(error_with({{"file", "broken.txt"},
                          {"max_changed", 6},
                          {"fixed_max_changed", 64},
                          {"hold", 1},
                          {"fixed_hold", 4},
                          {"snap", true}},
                         palette),
              HasSubstr("broken.txt: line 2"));
  fs::remove_all(folder);
}

}  // namespace
}  // namespace wc::model
