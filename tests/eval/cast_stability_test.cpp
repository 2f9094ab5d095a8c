// The cast-stability study on a tiny random-weight model: one factor at a time around the
// reference, agreement shares in range and exact where nothing differs, refusals before any run.
#include "engine/eval/cast_stability.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <string>

#include "engine/core/error.h"
#include "tests/eval/eval_test_config.h"
#include "tests/eval/study_plot_check.h"

namespace wc::eval {
namespace {

using attention::HeadType;

EvalOptions tiny_options(std::vector<uint64_t> seeds) {
  EvalOptions options;
  options.config = testing::eval_tiny_config(32);
  options.seeds = std::move(seeds);
  return options;
}

TEST(CastStability, OneFactorAtATimeAroundTheReference) {
  const EvalOptions options = tiny_options({1000000, 1000001, 1000000});
  CastStudyOptions study;
  study.walks = 2;
  study.classify_blocks = {7, 9};
  const CastStability result = run_cast_stability(options, study);
  // reference, two seeds, one block, one walk
  ASSERT_EQ(result.runs.size(), 5u);
  EXPECT_EQ(result.runs[0].factor, "reference");
  EXPECT_EQ(result.runs[1].factor, "seed");
  EXPECT_EQ(result.runs[3].factor, "block");
  EXPECT_EQ(result.runs[3].classify_block, 9);
  EXPECT_EQ(result.runs[4].factor, "walk");
  const int layers = options.config.layers, heads = options.config.heads;
  for (const CastRun& run : result.runs) {
    ASSERT_EQ(run.cast.size(), static_cast<size_t>(layers));
    for (const auto& layer : run.cast) {
      ASSERT_EQ(layer.size(), static_cast<size_t>(heads));
      for (HeadType type : layer) EXPECT_NE(type, HeadType::kDense) << "a head was never cast";
    }
    EXPECT_GE(run.agreement, 0.0);
    EXPECT_LE(run.agreement, 1.0);
  }
  // The third seed is the reference's own: same seed, block, step and walk give the same cast.
  EXPECT_EQ(result.runs[2].seed, result.runs[0].seed);
  EXPECT_EQ(result.runs[2].cast, result.runs[0].cast);
  EXPECT_DOUBLE_EQ(result.runs[2].agreement, 1.0);
  // A later classification block plays more frames before the cast applies.
  EXPECT_GT(result.runs[3].frames, result.runs[0].frames);
  ASSERT_EQ(result.head_agreement.size(), static_cast<size_t>(layers));
  for (const auto& layer : result.head_agreement) {
    for (double share : layer) {
      EXPECT_GE(share, 1.0 / 5.0 - 1e-12);
      EXPECT_LE(share, 1.0);
    }
  }
  double sum = 0.0;
  for (size_t i = 1; i < result.runs.size(); ++i) sum += result.runs[i].agreement;
  EXPECT_NEAR(result.overall, sum / 4.0, 1e-12);
  ASSERT_EQ(result.factors.size(), 3u);  // seed, block, walk (one step: no step factor)
  EXPECT_EQ(result.factors[0].name, "seed");
  EXPECT_EQ(result.factors[0].runs, 2);

  const nlohmann::json json = result.to_json();
  EXPECT_EQ(json.at("study"), "cast-stability");
  EXPECT_EQ(json.at("runs").size(), 5u);
  EXPECT_EQ(json.at("settings").at("classify_block"), 7);
  const std::string table = result.markdown();
  EXPECT_NE(table.find("| seed |"), std::string::npos) << table;
  EXPECT_NE(table.find("| every run |"), std::string::npos) << table;

  testing::expect_study_plot(result, "agreement");
}

TEST(CastStability, AgreementIsTheShareOfHeadsOfEqualType) {
  const std::vector<std::vector<HeadType>> a = {{HeadType::kSink, HeadType::kGlobal},
                                                {HeadType::kDummy, HeadType::kSpatial}};
  std::vector<std::vector<HeadType>> b = a;
  EXPECT_DOUBLE_EQ(cast_agreement(a, b), 1.0);
  b[0][1] = HeadType::kSpatial;  // expensive either way, but another type
  EXPECT_DOUBLE_EQ(cast_agreement(a, b), 0.75);
  b[1] = {HeadType::kGlobal, HeadType::kGlobal};
  EXPECT_DOUBLE_EQ(cast_agreement(a, b), 0.25);
  EXPECT_THROW(cast_agreement(a, {{HeadType::kSink}}), Error);
}

TEST(CastStability, RefusedBeforeAnyRun) {
  const EvalOptions options = tiny_options({1});
  const auto refused = [&](const CastStudyOptions& study, const std::string& needle) {
    try {
      run_cast_stability(options, study);
      ADD_FAILURE() << "accepted";
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find(needle), std::string::npos) << e.what();
    }
  };
  CastStudyOptions block_zero;
  block_zero.classify_blocks = {0};
  refused(block_zero, "block 0 has no history");
  CastStudyOptions negative_step;
  negative_step.classify_steps = {0, -1};
  refused(negative_step, "denoising step -1");
  CastStudyOptions no_walk;
  no_walk.walks = 0;
  refused(no_walk, "walks");
  EXPECT_THROW(run_cast_stability(tiny_options({}), CastStudyOptions{}), Error);
}

}  // namespace
}  // namespace wc::eval
