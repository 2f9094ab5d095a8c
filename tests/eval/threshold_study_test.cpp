// The thresholds study on a tiny random-weight model: one cell per (θ, θ_sc), the cast following
// the thresholds (θ = 0 casts nearly every head cheap), figures in range, an all-Global cast
// playing dense's frames, refusals before any run.
#include "engine/eval/threshold_study.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <string>

#include "engine/core/error.h"
#include "tests/eval/eval_test_config.h"
#include "tests/eval/study_plot_check.h"

namespace wc::eval {
namespace {

EvalOptions tiny_options() {
  EvalOptions options;
  options.config = testing::eval_tiny_config(32);
  options.seeds = {1000000, 1000001};
  return options;
}

int heads_of(const ThresholdCell& cell, const char* type) {
  const auto it = cell.heads_by_type.find(type);
  return it == cell.heads_by_type.end() ? 0 : it->second;
}

TEST(ThresholdStudy, OneCellPerPairWithTheCastFollowingTheThresholds) {
  const EvalOptions options = tiny_options();
  ThresholdStudyOptions study;
  study.thetas = {0.0, 1.0};  // 0: a head passes with any agreement; 1: only exact paths
  study.theta_scs = {0.755};
  study.frames = 3;
  const ThresholdStudy result = run_threshold_study(options, study);
  ASSERT_EQ(result.cells.size(), 2u);
  EXPECT_EQ(result.frames_scored, 3);
  const int heads = options.config.layers * options.config.heads;
  for (const ThresholdCell& cell : result.cells) {
    int sum = 0;
    for (const auto& [name, count] : cell.heads_by_type) sum += count;
    EXPECT_EQ(sum, heads);
    EXPECT_EQ(heads_of(cell, "dense"), 0) << "a head was never cast";
    EXPECT_GT(cell.ms_per_frame, 0.0);
    EXPECT_GT(cell.speed_vs_dense, 0.0);
    EXPECT_GE(cell.sprite_share, 0.0);
    EXPECT_LE(cell.sprite_share, 1.0);
    EXPECT_GE(cell.hud_share, 0.0);
    EXPECT_LE(cell.hud_share, 1.0);
    EXPECT_GT(cell.cache_bytes, 0);
  }
  // θ = 0: S_dummy >= 0 for any head whose dummy path keeps some of the output, so nearly every
  // head is Dummy and the policy holds less K/V than dense.
  EXPECT_GT(heads_of(result.cells[0], "dummy"), heads / 2);
  EXPECT_LT(result.cells[0].cache_bytes, result.dense.cache_bytes);
  EXPECT_GT(result.dense.ms_per_frame, 0.0);
  // The grid's thresholds are set over the eval's settings.
  EXPECT_TRUE(result.settings.is_object());
  const nlohmann::json json = result.to_json();
  EXPECT_EQ(json.at("study"), "thresholds");
  EXPECT_EQ(json.at("cells").size(), 2u);
  const std::string table = result.markdown();
  EXPECT_NE(table.find("| dense |"), std::string::npos) << table;
  EXPECT_NE(table.find("| 0 | 0.755 |"), std::string::npos) << table;

  testing::expect_study_plot(result, "thresholds");
}

// A cast of every head Global (forced, so the grid's thresholds do not move it) attends as dense
// does over the same window: on the same seed, keys and noise its frames are dense's.
TEST(ThresholdStudy, AnAllGlobalCastPlaysDensesFrames) {
  EvalOptions options = tiny_options();
  options.seeds = {1000002};
  options.settings["headcast"] = {{"cast", {{"mix", {0, 0, 0, options.config.heads}}}}};
  ThresholdStudyOptions study;
  study.thetas = {0.5};
  study.theta_scs = {0.5};
  study.frames = 2;
  const ThresholdStudy result = run_threshold_study(options, study);
  ASSERT_EQ(result.cells.size(), 1u);
  const ThresholdCell& cell = result.cells.front();
  EXPECT_EQ(heads_of(cell, "global"), options.config.layers * options.config.heads);
  EXPECT_GT(cell.psnr_vs_dense, 60.0);
  EXPECT_DOUBLE_EQ(cell.sprite_share, result.dense.sprite_share);
}

TEST(ThresholdStudy, RefusesABadGridBeforeAnyRun) {
  const EvalOptions options = tiny_options();
  const auto refused = [&](ThresholdStudyOptions study, const std::string& reason) {
    try {
      validate(study, options);
      ADD_FAILURE() << "accepted: " << reason;
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find(reason), std::string::npos) << e.what();
      EXPECT_NE(std::string(e.what()).find("study thresholds"), std::string::npos) << e.what();
    }
  };
  ThresholdStudyOptions study;
  study.thetas = {};
  refused(study, "the grid is empty");
  study = {};
  study.thetas = {1.2};
  refused(study, "theta 1.2");
  study = {};
  study.theta_scs = {-11};
  refused(study, "theta_sc -11");
  study = {};
  study.frames = 0;
  refused(study, "frames");
  EvalOptions no_seed = options;
  no_seed.seeds.clear();
  EXPECT_THROW(validate(ThresholdStudyOptions{}, no_seed), Error);
}

}  // namespace
}  // namespace wc::eval
