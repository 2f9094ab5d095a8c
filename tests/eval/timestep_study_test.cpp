// The timestep study on a tiny random-weight model: a row per denoising step and the committing
// pass, step 0 the agreement's reference; a cast of Globals plays dense's frames at every step;
// refusals before any run.
#include "engine/eval/timestep_study.h"

#include <gtest/gtest.h>

#include <string>

#include "engine/core/error.h"
#include "tests/eval/eval_test_config.h"
#include "tests/eval/study_plot_check.h"

namespace wc::eval {
namespace {

EvalOptions tiny_options() {
  EvalOptions options;
  options.config = testing::eval_tiny_config(32);
  options.config.sampler.steps = 2;
  options.seeds = {1000000, 1000001};
  return options;
}

// θ = 0 passes every cheap path, so each step's cast is mostly cheap heads; the rows run from
// step 0 to the committing pass, step 0 agrees with itself, and every row counts every head.
TEST(TimestepStudy, ARowPerStepAndTheCommittingPass) {
  EvalOptions options = tiny_options();
  options.settings["headcast"] = {{"theta_dummy", 0.0},
                                  {"theta_sink", 0.0},
                                  {"theta_spatial", 0.0},
                                  {"theta_spatial_score", -10.0}};
  TimestepStudyOptions study;
  study.frames = 2;
  const TimestepStudy result = run_timestep_study(options, study);
  ASSERT_EQ(result.denoising_steps, 2);
  ASSERT_EQ(result.rows.size(), 3u);
  const int heads = options.config.layers * options.config.heads;
  for (size_t r = 0; r < result.rows.size(); ++r) {
    const TimestepRow& row = result.rows[r];
    EXPECT_EQ(row.step, static_cast<int>(r));
    EXPECT_EQ(row.clean, r == 2);
    int sum = 0;
    for (const auto& [name, count] : row.heads_by_type) sum += count;
    EXPECT_EQ(sum, heads) << r;
    EXPECT_LT(row.heads_by_type.count("global") ? row.heads_by_type.at("global") : 0, heads) << r;
    EXPECT_GE(row.agreement, 0.0);
    EXPECT_LE(row.agreement, 1.0);
    EXPECT_GT(row.ms_per_frame, 0.0);
    EXPECT_LT(row.cache_bytes, result.dense.cache_bytes) << r;
  }
  EXPECT_DOUBLE_EQ(result.rows[0].agreement, 1.0);

  const nlohmann::json json = result.to_json();
  EXPECT_EQ(json.at("study"), "timestep");
  EXPECT_EQ(json.at("rows").size(), 3u);
  EXPECT_EQ(json.at("rows")[2].at("committing_pass"), true);
  EXPECT_FALSE(json.at("settings").contains("classify_step"));
  const std::string table = result.markdown();
  EXPECT_NE(table.find("| step 1 |"), std::string::npos) << table;
  EXPECT_NE(table.find("| committing pass |"), std::string::npos) << table;
  testing::expect_study_plot(result, "timestep");
}

// θ above every score casts every head Global at every step: each row agrees with step 0 and
// plays dense's frames.
TEST(TimestepStudy, GlobalCastsAgreeAndPlayDensesFrames) {
  EvalOptions options = tiny_options();
  options.seeds = {1000002};
  options.settings["headcast"] = {
      {"theta_dummy", 2.0}, {"theta_sink", 2.0}, {"theta_spatial", 2.0}};
  TimestepStudyOptions study;
  study.frames = 2;
  const TimestepStudy result = run_timestep_study(options, study);
  for (const TimestepRow& row : result.rows) {
    EXPECT_DOUBLE_EQ(row.agreement, 1.0) << row.step;
    EXPECT_GT(row.psnr_vs_dense, 60.0) << row.step;
    EXPECT_DOUBLE_EQ(row.sprite_share, result.dense.sprite_share) << row.step;
  }
}

TEST(TimestepStudy, RefusedBeforeAnyRun) {
  EvalOptions options = tiny_options();
  const auto refused = [&](const TimestepStudyOptions& study, const std::string& why) {
    try {
      validate(study, options);
      ADD_FAILURE() << "accepted: " << why;
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find("study timestep: "), std::string::npos) << e.what();
      EXPECT_NE(std::string(e.what()).find(why), std::string::npos) << e.what();
    }
  };
  refused(TimestepStudyOptions{0}, "frames");
  options.config.sampler.steps = 1;
  refused(TimestepStudyOptions{}, "at least two");
  options.config.sampler.steps = 2;
  options.settings["headcast"] = {{"classify_step", 1}};
  refused(TimestepStudyOptions{}, "classify_step");
  options.settings["headcast"] = {{"cast", {{"mix", {0, 0, 0, options.config.heads}}}}};
  refused(TimestepStudyOptions{}, "force a cast");
  options.settings.clear();
  options.seeds.clear();
  refused(TimestepStudyOptions{}, "no seed");
}

}  // namespace
}  // namespace wc::eval
