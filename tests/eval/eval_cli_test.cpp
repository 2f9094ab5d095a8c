// `worldcast eval` end to end: a checkpoint folder of random weights with its config.json, tiny
// counts; the JSON report has every field in sane ranges; bad input names the file at fault.
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <nlohmann/json.hpp>
#include <string>

#include "engine/model/dit.h"
#include "engine/model/model_config.h"
#include "engine/model/weights.h"
#include "tests/eval/eval_test_config.h"

namespace wc::eval {
namespace {

namespace fs = std::filesystem;
using Json = nlohmann::json;

struct Result {
  int exit_code = -1;
  std::string output;  // stdout and stderr
};

Result run_worldcast(const std::string& arguments) {
  const std::string command = std::string("cd '") + WORLDCAST_SOURCE_DIR + "' && '" +
                              WORLDCAST_BINARY + "' " + arguments + " 2>&1";
  Result result;
  FILE* pipe = popen(command.c_str(), "r");
  if (!pipe) return result;
  char buffer[4096];
  while (size_t n = fread(buffer, 1, sizeof(buffer), pipe)) result.output.append(buffer, n);
  const int status = pclose(pipe);
  result.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return result;
}

class EvalCli : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("wc_eval_cli_" + std::to_string(::getpid()) + "_" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_ / "weights");
    const model::ModelConfig config = testing::eval_tiny_config(32);
    model::CausalDiT model(config);
    model::init_random_weights(model, 5);
    model::save_weights(model, (dir_ / "weights").string());
    std::ofstream(dir_ / "weights" / "config.json") << model::model_config_to_json(config).dump(2);
  }
  void TearDown() override { fs::remove_all(dir_); }

  std::string path(const std::string& name) const { return (dir_ / name).string(); }

  fs::path dir_;
};

const char* kTinyCounts =
    " --seeds 2 --responsiveness-frames 6 --idle-frames 4 --stability-frames 8"
    " --stability-probe 3 --policy-frames 10 --speed-frames 3 --speed-warmup 2 --world-frames 6"
    " --world-trip-steps 2 --quiet";

TEST_F(EvalCli, WritesAReportWithEveryField) {
  const Result result = run_worldcast("eval --weights '" + path("weights") + "'" + kTinyCounts +
                                      " --json '" + path("eval.json") + "'");
  ASSERT_EQ(result.exit_code, 0) << result.output;
  EXPECT_NE(result.output.find("policies vs dense"), std::string::npos) << result.output;
  EXPECT_NE(result.output.find("checks pass"), std::string::npos) << result.output;
  std::ifstream in(path("eval.json"));
  const Json report = Json::parse(in);
  EXPECT_EQ(report["format"], "worldcast-eval");
  EXPECT_EQ(report["source"], "model");
  EXPECT_EQ(report["config"], "eval-tiny");
  EXPECT_EQ(report["seeds"], Json({1000000, 1000001}));
  EXPECT_EQ(report["metrics"].size(), 7u);

  const Json& r = report["responsiveness"];
  for (const char* key : {"share", "scored_steps", "exact_shift_share", "estimator_share_on_truth",
                          "blocked_steps", "blocked_still_share", "idle_steps", "idle_still_share",
                          "mean_peak", "per_seed", "seconds"}) {
    EXPECT_TRUE(r.contains(key)) << key;
  }
  EXPECT_EQ(
      r["scored_steps"].get<int>() + r["blocked_steps"].get<int>() + r["idle_steps"].get<int>(),
      12);
  if (!r["estimator_share_on_truth"].is_null()) {
    EXPECT_GE(r["estimator_share_on_truth"].get<double>(), 0.0);
  }

  const Json& idle = report["idle"];
  EXPECT_EQ(idle["psnr_by_frame"].size(), 4u);
  EXPECT_GT(idle["psnr_db"].get<double>(), 0.0);
  EXPECT_LE(idle["psnr_db"].get<double>(), 100.0);
  EXPECT_GE(idle["ssim"].get<double>(), -1.0);
  EXPECT_LE(idle["ssim"].get<double>(), 1.0);

  const Json& memory = report["memory"];
  EXPECT_EQ(memory["steps"].get<int>(), 3);
  EXPECT_EQ(memory["per_seed"].size() + memory["skipped_seeds"].size(), 2u);
  for (const char* key : {"psnr_db", "truth_psnr_db", "return_psnr_db", "window_frames"}) {
    EXPECT_TRUE(memory.contains(key)) << key;
  }

  const Json& stability = report["stability"];
  EXPECT_TRUE(stability["finite"].get<bool>());
  EXPECT_EQ(stability["non_finite_blocks"].get<int>(), 0);
  for (const char* key : {"idle_self_psnr_start_db", "idle_self_psnr_end_db", "delta_db",
                          "within_1db", "truth_idle_self_psnr_start_db", "detail_ratio",
                          "mean_rgb_end", "idle_change_in_overlays_end"}) {
    EXPECT_TRUE(stability.contains(key)) << key;
  }

  std::set<std::string> policies;
  for (const Json& row : report["policies"]["rows"]) {
    policies.insert(row["policy"].get<std::string>());
    if (row["policy"] == "dense") continue;
    EXPECT_GE(row["psnr_db"].get<double>(), 0.0);
    EXPECT_LE(row["psnr_db"].get<double>(), 100.0);
    EXPECT_LE(row["ssim"].get<double>(), 1.0);
    EXPECT_GT(row["flicker_vs_dense"].get<double>(), 0.0);
  }
  EXPECT_EQ(policies,
            (std::set<std::string>{"dense", "headcast", "dummy", "tempcache", "combined"}));

  ASSERT_EQ(report["speed"]["rows"].size(), 5u);
  for (const Json& row : report["speed"]["rows"]) {
    EXPECT_GT(row["fps"].get<double>(), 0.0);
    EXPECT_GT(row["frame_ms_p99"].get<double>(), 0.0);
    EXPECT_GT(row["model_ms_mean"].get<double>(), 0.0);
  }
  const Json& world = report["world"];
  EXPECT_EQ(world["walk_frames"].get<int>(), 2 * 6);
  EXPECT_EQ(world["return_trip_steps"].get<int>(), 2);
  for (const char* key :
       {"terrain_mix_tv", "terrain_mix_ratio", "game_mix", "terrain_tv", "non_grass_ratio",
        "structure_share", "sprite_share", "hud_share", "blocked_still_share",
        "walk_scrolled_share", "own_blocked_still_share", "own_free_scrolled_share",
        "return_patch_share", "segments", "per_seed", "survey"}) {
    EXPECT_TRUE(world.contains(key)) << key;
  }
  EXPECT_GE(report["checks"].size(), 15u);
}

TEST_F(EvalCli, SelectedMetricsOnly) {
  const Result result =
      run_worldcast("eval --weights '" + path("weights") + "'" + kTinyCounts +
                    " --metrics idle,speed --policies headcast --json '" + path("some.json") + "'");
  ASSERT_EQ(result.exit_code, 0) << result.output;
  std::ifstream in(path("some.json"));
  const Json report = Json::parse(in);
  EXPECT_TRUE(report.contains("idle"));
  EXPECT_TRUE(report.contains("speed"));
  EXPECT_FALSE(report.contains("memory"));
  EXPECT_FALSE(report.contains("policies"));
  EXPECT_EQ(report["speed"]["rows"].size(), 2u);  // dense + headcast
}

TEST_F(EvalCli, GameSourceScoresTheCeiling) {
  const Result result = run_worldcast(
      "eval --source game --seeds 1 --metrics responsiveness,idle --responsiveness-frames 60"
      " --idle-frames 8 --quiet --json '" +
      path("game.json") + "'");
  ASSERT_EQ(result.exit_code, 0) << result.output;
  std::ifstream in(path("game.json"));
  const Json report = Json::parse(in);
  EXPECT_EQ(report["source"], "game");
  EXPECT_EQ(report["responsiveness"]["share"].get<double>(), 1.0);
  EXPECT_EQ(report["idle"]["psnr_db"].get<double>(), 100.0);
}

// --frames-dir: both stability probes and the rollout between them, generated and true, as PNG. The
// game as the model is its own truth, so each probe frame is the true one byte for byte, and at
// rest nothing in its sprite or HUD changes.
TEST_F(EvalCli, StabilityProbesComeOutAsPng) {
  const Result result = run_worldcast(
      "eval --source game --seeds 1 --metrics stability --stability-frames 8 --stability-probe 3"
      " --quiet --frames-dir '" +
      path("frames") + "' --json '" + path("stability.json") + "'");
  ASSERT_EQ(result.exit_code, 0) << result.output;
  const auto bytes = [&](const std::string& name) {
    std::ifstream in(dir_ / "frames" / (name + ".png"), std::ios::binary);
    return std::string(std::istreambuf_iterator<char>(in), {});
  };
  for (const char* probe : {"start", "end"}) {
    for (int i = 0; i < 3; ++i) {
      const std::string name = std::string("stability_") + probe + "_0" + std::to_string(i);
      ASSERT_TRUE(fs::exists(dir_ / "frames" / (name + ".png"))) << name;
      EXPECT_GT(bytes(name).size(), 100u) << name;
      EXPECT_EQ(bytes(name),
                bytes(std::string("stability_") + probe + "_truth_0" + std::to_string(i)))
          << name;
    }
  }
  // The rollout between the probes, at each tenth of its length (here every frame).
  for (const std::string index : {"00001", "00008"}) {
    const std::string name = "stability_rollout_" + index;
    ASSERT_TRUE(fs::exists(dir_ / "frames" / (name + ".png"))) << name;
    EXPECT_EQ(bytes(name), bytes("stability_rollout_truth_" + index)) << name;
  }
  std::ifstream in(path("stability.json"));
  const Json s = Json::parse(in)["stability"];
  for (const char* key : {"idle_change_in_overlays_start", "idle_change_in_overlays_end"}) {
    ASSERT_TRUE(s.contains(key)) << key;
    if (!s[key].is_null()) {
      EXPECT_EQ(s[key].get<double>(), 0.0) << key;
    }
  }
}

// --metrics world: the report's world section and table lines, and the walk's grid as PNG
// (frames 0, 100, 200 and 300: four pictures of the model above four of the game).
TEST_F(EvalCli, WorldMetricWritesItsGrid) {
  const Result result = run_worldcast(
      "eval --source game --seeds 1 --metrics world --world-frames 300 --world-trip-steps 4"
      " --quiet --frames-dir '" +
      path("frames") + "' --json '" + path("world.json") + "'");
  ASSERT_EQ(result.exit_code, 0) << result.output;
  EXPECT_NE(result.output.find("tile structure 100.0%"), std::string::npos) << result.output;
  EXPECT_NE(result.output.find("tiles the view's edge completes whole 100.0%"), std::string::npos)
      << result.output;
  EXPECT_NE(result.output.find("world terrain mix TV"), std::string::npos) << result.output;
  EXPECT_NE(result.output.find("terrain mix against the game's"), std::string::npos)
      << result.output;
  std::ifstream in(path("world.json"));
  const Json w = Json::parse(in)["world"];
  EXPECT_EQ(w["terrain_tv"].get<double>(), 0.0);
  EXPECT_EQ(w["return_trip_steps"].get<int>(), 4);
  std::ifstream png(dir_ / "frames" / "world_walk_grid.png", std::ios::binary);
  ASSERT_TRUE(png.good());
  unsigned char header[24];
  png.read(reinterpret_cast<char*>(header), sizeof header);
  const auto be32 = [&](int at) {
    return (header[at] << 24) | (header[at + 1] << 16) | (header[at + 2] << 8) | header[at + 3];
  };
  EXPECT_EQ(be32(16), 4 * 130 - 2);  // IHDR width
  EXPECT_EQ(be32(20), 2 * 128 + 2);  // IHDR height
}

TEST_F(EvalCli, MissingWeightsNameThePath) {
  const Result result = run_worldcast("eval --weights '" + path("nowhere") + "' --quiet");
  EXPECT_EQ(result.exit_code, 1) << result.output;
  EXPECT_NE(result.output.find(path("nowhere")), std::string::npos) << result.output;
  EXPECT_NE(result.output.find("weights not found"), std::string::npos) << result.output;
}

TEST_F(EvalCli, WithoutConfigJsonTheCheckpointMetadataServes) {
  fs::remove(dir_ / "weights" / "config.json");
  const Result result =
      run_worldcast("eval --weights '" + path("weights") + "' --metrics idle --idle-frames 2 " +
                    "--seeds 1 --policies dense --quiet --json '" + path("meta.json") + "'");
  ASSERT_EQ(result.exit_code, 0) << result.output;
  std::ifstream in(path("meta.json"));
  const Json report = Json::parse(in);
  EXPECT_EQ(report["config"], "eval-tiny");
  EXPECT_NE(report["config_file"].get<std::string>().find("metadata 'config'"), std::string::npos);
}

TEST_F(EvalCli, MissingConfigNamesTheFile) {
  const Result result = run_worldcast("eval --weights '" + path("weights") + "' --config '" +
                                      path("missing.json") + "' --quiet");
  EXPECT_EQ(result.exit_code, 1) << result.output;
  EXPECT_NE(result.output.find(path("missing.json") + ": model config not found"),
            std::string::npos)
      << result.output;
}

TEST_F(EvalCli, BadConfigNamesTheFileAndField) {
  Json config = model::model_config_to_json(testing::eval_tiny_config(32));
  config["hidden_size"] = 32;  // a typo'd key
  std::ofstream(path("bad.json")) << config.dump();
  const Result result = run_worldcast("eval --weights '" + path("weights") + "' --config '" +
                                      path("bad.json") + "' --quiet");
  EXPECT_EQ(result.exit_code, 1) << result.output;
  EXPECT_NE(result.output.find(path("bad.json")), std::string::npos) << result.output;
  EXPECT_NE(result.output.find("hidden_size"), std::string::npos) << result.output;
}

TEST_F(EvalCli, WeightsThatDoNotFitTheConfigNameTheTensor) {
  model::ModelConfig other = testing::eval_tiny_config(32);
  other.hidden = 64;
  other.head_dim = 32;
  std::ofstream(path("other.json")) << model::model_config_to_json(other).dump();
  const Result result = run_worldcast("eval --weights '" + path("weights") + "' --config '" +
                                      path("other.json") + "' --quiet" + kTinyCounts);
  EXPECT_EQ(result.exit_code, 1) << result.output;
  EXPECT_NE(result.output.find(path("weights")), std::string::npos) << result.output;
  EXPECT_NE(result.output.find("shape"), std::string::npos) << result.output;
}

TEST_F(EvalCli, BadOptionsAreNamed) {
  Result result = run_worldcast("eval --weights '" + path("weights") + "' --metrics idle,fun");
  EXPECT_EQ(result.exit_code, 1);
  EXPECT_NE(result.output.find("unknown metric 'fun'"), std::string::npos) << result.output;
  result = run_worldcast("eval --weights '" + path("weights") + "' --settings 'dense={'");
  EXPECT_EQ(result.exit_code, 1);
  EXPECT_NE(result.output.find("--settings dense"), std::string::npos) << result.output;
  result = run_worldcast("eval --quiet --random-weights --weights '" + path("weights") + "'");
  EXPECT_EQ(result.exit_code, 1);
  EXPECT_NE(result.output.find("not both"), std::string::npos) << result.output;
  result = run_worldcast("eval --quiet --weights '" + path("weights") + "' --device tpu");
  EXPECT_EQ(result.exit_code, 1);
  EXPECT_NE(result.output.find("--device: unknown device 'tpu'"), std::string::npos)
      << result.output;
}

// `worldcast study cast-stability` on the same weights: its table, JSON and plot in the folder
// named, and refusals before any run.
TEST_F(EvalCli, StudyCastStabilityWritesItsFolder) {
  const std::string out = path("study");
  Result result = run_worldcast("study cast-stability --quiet --weights '" + path("weights") +
                                "' --out '" + out + "' --seeds 2 --walks 2 --blocks 7,8");
  ASSERT_EQ(result.exit_code, 0) << result.output;
  EXPECT_NE(result.output.find("| every run |"), std::string::npos) << result.output;
  std::ifstream in(out + "/cast_stability.json");
  const Json json = Json::parse(in);
  EXPECT_EQ(json.at("runs").size(), 4u);  // reference, one seed, one block, one walk
  EXPECT_EQ(json.at("factors").size(), 3u);
  EXPECT_TRUE(fs::exists(out + "/cast_stability.md"));

  result = run_worldcast("study cast-stability --quiet --weights '" + path("weights") +
                         "' --out '" + out + "' --blocks 0");
  EXPECT_EQ(result.exit_code, 1);
  EXPECT_NE(result.output.find("block 0 has no history"), std::string::npos) << result.output;
  result = run_worldcast("study dreams --quiet --out '" + out + "'");
  EXPECT_EQ(result.exit_code, 1);
  EXPECT_NE(result.output.find("unknown study 'dreams'"), std::string::npos) << result.output;
}

TEST_F(EvalCli, StudyThresholdsWritesItsFolder) {
  const std::string out = path("thresholds");
  Result result =
      run_worldcast("study thresholds --quiet --weights '" + path("weights") + "' --out '" + out +
                    "' --seeds 1 --thetas 0.5,0.95 --theta-scs 0.755 --frames 2");
  ASSERT_EQ(result.exit_code, 0) << result.output;
  EXPECT_NE(result.output.find("| dense |"), std::string::npos) << result.output;
  std::ifstream in(out + "/thresholds.json");
  const Json json = Json::parse(in);
  EXPECT_EQ(json.at("cells").size(), 2u);
  EXPECT_EQ(json.at("frames_scored"), 2);
  EXPECT_TRUE(fs::exists(out + "/thresholds.md"));

  result = run_worldcast("study thresholds --quiet --weights '" + path("weights") + "' --out '" +
                         out + "' --thetas 1.5");
  EXPECT_EQ(result.exit_code, 1);
  EXPECT_NE(result.output.find("theta 1.5: must be in [0, 1]"), std::string::npos) << result.output;
}

TEST_F(EvalCli, StudyArchetypesWritesItsFolder) {
  const std::string out = path("archetypes");
  Result result = run_worldcast("study archetypes --quiet --weights '" + path("weights") +
                                "' --out '" + out + "' --seeds 1 --frames 2");
  ASSERT_EQ(result.exit_code, 0) << result.output;
  EXPECT_NE(result.output.find("| as cast |"), std::string::npos) << result.output;
  std::ifstream in(out + "/archetypes.json");
  const Json json = Json::parse(in);
  EXPECT_GE(json.at("rows").size(), 1u);
  EXPECT_EQ(json.at("frames_scored"), 2);
  EXPECT_TRUE(fs::exists(out + "/archetypes.md"));
  EXPECT_TRUE(fs::exists(out + "/archetypes.png"));

  result = run_worldcast("study archetypes --quiet --weights '" + path("weights") + "' --out '" +
                         out + "' --settings '{\"cast\": {\"mix\": [0, 0, 0, 4]}}'");
  EXPECT_EQ(result.exit_code, 1);
  EXPECT_NE(result.output.find("force a cast"), std::string::npos) << result.output;
}

TEST_F(EvalCli, StudyOverheadWritesItsFolder) {
  const std::string out = path("overhead");
  Result result =
      run_worldcast("study overhead --quiet --weights '" + path("weights") + "' --out '" + out +
                    "' --window 3 --warmup 5 --timed 1 --rollout-frames 10,1000");
  ASSERT_EQ(result.exit_code, 0) << result.output;
  EXPECT_NE(result.output.find("| share of 1000 frames |"), std::string::npos) << result.output;
  std::ifstream in(out + "/overhead.json");
  const Json json = Json::parse(in);
  ASSERT_EQ(json.at("rows").size(), 1u);
  EXPECT_GT(json.at("rows")[0].at("classify_ms").get<double>(), 0.0);
  EXPECT_TRUE(fs::exists(out + "/overhead.md"));
  EXPECT_TRUE(fs::exists(out + "/overhead.png"));

  result = run_worldcast("study overhead --quiet --weights '" + path("weights") + "' --out '" +
                         out + "' --resolutions 8k");
  EXPECT_EQ(result.exit_code, 1);
  EXPECT_NE(result.output.find("resolution '8k'"), std::string::npos) << result.output;
}

TEST_F(EvalCli, StudyTimestepWritesItsFolder) {
  const std::string out = path("timestep");
  Result result = run_worldcast("study timestep --quiet --weights '" + path("weights") +
                                "' --out '" + out + "' --seeds 1 --frames 2");
  ASSERT_EQ(result.exit_code, 0) << result.output;
  EXPECT_NE(result.output.find("| committing pass |"), std::string::npos) << result.output;
  std::ifstream in(out + "/timestep.json");
  const Json json = Json::parse(in);
  EXPECT_EQ(json.at("rows").size(), 3u);  // the tiny sampler's two steps and the committing pass
  EXPECT_TRUE(fs::exists(out + "/timestep.md"));
  EXPECT_TRUE(fs::exists(out + "/timestep.png"));

  result = run_worldcast("study timestep --quiet --weights '" + path("weights") + "' --out '" +
                         out + "' --settings '{\"classify_step\": 1}'");
  EXPECT_EQ(result.exit_code, 1);
  EXPECT_NE(result.output.find("sets it for each row"), std::string::npos) << result.output;
}

}  // namespace
}  // namespace wc::eval
