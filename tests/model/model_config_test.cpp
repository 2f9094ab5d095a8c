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

// The keys of the retired pixel models (moved-reference choices, the palette and patch snaps)
// are unknown: a config or checkpoint that carries them is refused by field.
TEST(ModelConfig, RetiredPixelKeysAreUnknown) {
  nlohmann::json json = game_small_json();
  json["prediction"] = {{"reference", "previous_frame"}, {"spread", 0.5}, {"move_pixels", 8}};
  EXPECT_THAT(testing::error_of([&] { parse_model_config(json, "cfg.json"); }),
              HasSubstr("cfg.json: field 'prediction.move_pixels': unknown key"));
  json = game_small_json();
  json["palette"] = {{"colours", {"#000000"}}, {"snap", true}};
  EXPECT_THAT(testing::error_of([&] { parse_model_config(json, "cfg.json"); }),
              HasSubstr("cfg.json: field 'palette': unknown key"));
  json = game_small_json();
  json["patch_snap"] = {{"file", "patches.txt"}, {"snap", true}};
  EXPECT_THAT(testing::error_of([&] { parse_model_config(json, "cfg.json"); }),
              HasSubstr("cfg.json: field 'patch_snap': unknown key"));
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

}  // namespace
}  // namespace wc::model
