// The overhead study on a tiny random-weight config: a row per resolution with the
// classification timed in the warm-up and its share of each rollout length falling as the
// rollout grows; the share's arithmetic; refusals before any run.
#include "engine/eval/overhead_study.h"

#include <gtest/gtest.h>

#include <string>

#include "engine/core/error.h"
#include "tests/eval/study_plot_check.h"
#include "tests/model/model_test_util.h"

namespace wc::eval {
namespace {

EvalOptions tiny_options() {
  EvalOptions options;
  options.config = testing::tiny_config();
  options.window = 3;
  return options;
}

TEST(OverheadStudy, ShareOfARolloutIsTheClassificationOverTheWhole) {
  EXPECT_DOUBLE_EQ(classification_share(10.0, 5.0, 18), 0.1);  // 10 / (10 + 90)
  EXPECT_DOUBLE_EQ(classification_share(0.0, 5.0, 18), 0.0);
  EXPECT_DOUBLE_EQ(classification_share(3.0, 0.0, 0), 1.0);
}

TEST(OverheadStudy, ARowPerResolutionWithSharesFallingOverLongerRollouts) {
  EvalOptions options = tiny_options();
  OverheadStudyOptions study;
  study.resolutions = {"", "wide"};
  study.rollout_frames = {10, 100, 1000};
  study.warmup_blocks = 5;
  study.timed_blocks = 2;
  const OverheadStudy result = run_overhead_study(options, study);
  ASSERT_EQ(result.rows.size(), 2u);
  EXPECT_EQ(result.rows[1].tokens_per_block, 2 * result.rows[0].tokens_per_block);
  for (const OverheadRow& row : result.rows) {
    SCOPED_TRACE(row.resolution);
    EXPECT_GT(row.classify_ms, 0.0);
    EXPECT_GT(row.headcast_block_ms, 0.0);
    EXPECT_GT(row.dense_block_ms, 0.0);
    ASSERT_EQ(row.shares.size(), 3u);
    const int f = row.frames_per_block;
    EXPECT_DOUBLE_EQ(row.shares[1], classification_share(row.classify_ms, row.headcast_block_ms,
                                                         (100 + f - 1) / f));
    EXPECT_GT(row.shares[0], row.shares[1]);
    EXPECT_GT(row.shares[1], row.shares[2]);
  }
  const nlohmann::json json = result.to_json();
  EXPECT_EQ(json.at("study"), "overhead");
  EXPECT_EQ(json.at("rows")[1].at("resolution"), "wide");
  const std::string table = result.markdown();
  EXPECT_NE(table.find("| share of 1000 frames |"), std::string::npos) << table;
  EXPECT_NE(table.find("| wide |"), std::string::npos) << table;
  testing::expect_study_plot(result, "overhead");
}

TEST(OverheadStudy, RefusedBeforeAnyRun) {
  EvalOptions options = tiny_options();
  const auto refused = [&](const OverheadStudyOptions& study, const std::string& why) {
    try {
      validate(study, options);
      ADD_FAILURE() << "accepted: " << why;
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find("study overhead: "), std::string::npos) << e.what();
      EXPECT_NE(std::string(e.what()).find(why), std::string::npos) << e.what();
    }
  };
  OverheadStudyOptions study;
  study.resolutions = {"1080p"};
  refused(study, "no such resolution");
  study = {};
  study.rollout_frames = {100, 0};
  refused(study, "rollout frames");
  study = {};
  study.timed_blocks = 0;
  refused(study, "timed blocks");
  options.settings["headcast"] = {{"cast", {{"mix", {0, 0, 0, options.config.heads}}}}};
  refused(OverheadStudyOptions{}, "force a cast");
  // A warm-up too short to fill the window classifies nothing: named, not a zero share.
  options.settings.clear();
  study = {};
  study.warmup_blocks = 1;
  study.timed_blocks = 1;
  try {
    run_overhead_study(options, study);
    ADD_FAILURE() << "accepted a warm-up that classified nothing";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("classified nothing"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace wc::eval
