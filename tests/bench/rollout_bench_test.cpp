// `bench rollout`'s library on a tiny CPU rollout: every policy runs, dense-unbounded stops where
// told, TempCache's cache stays under its budget while dense grows, flatness is computed as
// defined; the saved JSON reads back (bad fields are named) and plots through gnuplot.
#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <string>
#include <vector>

#include "bench/rollout_bench.h"
#include "engine/core/error.h"
#include "engine/core/timing.h"

namespace wc::attention {
namespace {

TEST(RolloutBench, FlatnessIsTheRatioOfMedians) {
  std::vector<double> frames(400, 1.0);
  for (size_t i = 300; i < 400; ++i) frames[i] = 3.0;
  EXPECT_DOUBLE_EQ(frame_time_flatness(frames), 3.0);
  EXPECT_DOUBLE_EQ(frame_time_flatness(std::vector<double>(299, 1.0)), 0.0);
}

// A plateau in the middle passes the ratio at the end but not the worst over n.
TEST(RolloutBench, WorstFlatnessSeesAPlateauTheEndRatioMisses) {
  std::vector<double> frames(1000, 2.0);
  for (size_t i = 400; i < 600; ++i) frames[i] = 3.0;
  EXPECT_DOUBLE_EQ(frame_time_flatness(frames), 1.0);
  EXPECT_DOUBLE_EQ(frame_time_flatness_worst(frames), 1.5);
  EXPECT_DOUBLE_EQ(frame_time_flatness_worst(std::vector<double>(400, 2.0)), 1.0);
  EXPECT_DOUBLE_EQ(frame_time_flatness_worst(std::vector<double>(299, 1.0)), 0.0);
}

TEST(RolloutBench, TinyCpuRolloutBoundsTempCacheAndStopsDense) {
  RolloutBenchOptions o;
  o.resolution = "6x4";
  o.num_heads = 4;
  o.head_dim = 16;
  o.headcast_cast = {{"mix", {1, 1, 1, 1}}};
  o.blocks = 40;
  o.every = 5;
  o.window = 6;
  o.budget_frames = 5;
  o.dense_max_blocks = 30;
  o.seed = 7;
  const RolloutBenchReport report = run_rollout_bench(o);
  ASSERT_EQ(report.results.size(), 5u);
  const int64_t frame_tokens = 24;
  for (const RolloutPolicyResult& r : report.results) {
    SCOPED_TRACE(r.label);
    EXPECT_FALSE(r.samples.empty());
    if (r.label == "dense") {
      EXPECT_TRUE(r.stopped_early);
      EXPECT_EQ(r.block_ms.size(), 30u);
      EXPECT_GT(r.bytes_per_frame, 0.0);  // grows without bound
    } else {
      EXPECT_EQ(r.block_ms.size(), 40u);
    }
    if (r.label == "tempcache") {
      // 4 heads, at most budget entries each.
      for (const RolloutSample& s : r.samples) EXPECT_LE(s.cache_entries, 4 * 5 * frame_tokens);
      EXPECT_GT(r.merges, 0);  // static and drifting rows merge
    }
  }
  const auto json = report.to_json();
  EXPECT_EQ(json["results"].size(), 5u);
  EXPECT_NE(report.table().find("stopped early"), std::string::npos);
  o.policies = {"sparse"};
  EXPECT_THROW(run_rollout_bench(o), Error);
}

RolloutBenchReport tiny_report() {
  RolloutBenchOptions o;
  o.resolution = "4x3";
  o.num_heads = 4;
  o.head_dim = 8;
  o.headcast_cast = {{"mix", {1, 1, 1, 1}}};
  o.blocks = 12;
  o.every = 4;
  o.window = 6;
  o.budget_frames = 4;
  o.dense_max_blocks = 7;
  o.policies = {"dense", "tempcache"};
  return run_rollout_bench(o);
}

std::string error_of(const nlohmann::json& json) {
  try {
    RolloutBenchReport::from_json(json, "saved.json");
  } catch (const Error& error) {
    return error.what();
  }
  return "";
}

TEST(RolloutBench, JsonRoundTripsAndBadFieldsAreNamed) {
  const RolloutBenchReport report = tiny_report();
  const nlohmann::json json = report.to_json();
  const RolloutBenchReport back = RolloutBenchReport::from_json(json, "saved.json");
  EXPECT_EQ(back.to_json(), json);
  EXPECT_EQ(back.table(), report.table());
  ASSERT_EQ(back.results.size(), 2u);
  EXPECT_TRUE(back.results[0].stopped_early);
  EXPECT_EQ(back.results[0].block_ms, report.results[0].block_ms);

  const auto expect_named = [&](nlohmann::json bad, const std::string& field) {
    const std::string message = error_of(bad);
    EXPECT_NE(message.find("saved.json"), std::string::npos) << field << ": " << message;
    EXPECT_NE(message.find("'" + field + "'"), std::string::npos) << field << ": " << message;
  };
  nlohmann::json bad = json;
  bad.erase("heads");
  expect_named(bad, "heads");
  bad = json;
  bad["dtype"] = "f16";
  expect_named(bad, "dtype");
  bad = json;
  bad["results"][1]["block_ms"][3] = -1.0;
  expect_named(bad, "results[1].block_ms[3]");
  bad = json;
  bad["results"][1]["block_ms"][2] = "fast";
  expect_named(bad, "results[1].block_ms[2]");
  bad = json;
  bad["results"][0]["blocks_run"] = 99;
  expect_named(bad, "results[0].blocks_run");
  bad = json;
  bad["results"][1]["samples"][1]["cache_bytes"] = -5;
  expect_named(bad, "results[1].samples[1].cache_bytes");
  bad = json;
  bad["results"][1]["samples"][2]["block"] = 0;  // out of order
  expect_named(bad, "results[1].samples[2].block");
  bad = json;
  bad["results"][1]["frames_dropped"] = 3;
  expect_named(bad, "results[1].frames_dropped");
  bad = json;
  bad["grid"] = {4};
  expect_named(bad, "grid");
  EXPECT_NE(error_of(nlohmann::json::array()).find("saved.json"), std::string::npos);
  EXPECT_THROW(load_rollout_report("/nonexistent/rollout.json"), Error);
}

TEST(RolloutBench, SavedReportPlotsThroughGnuplot) {
  if (std::system("command -v gnuplot >/dev/null 2>&1") != 0) {
    GTEST_SKIP() << "gnuplot not installed (Debian gnuplot-nox)";
  }
  const std::string json_path = ::testing::TempDir() + "rollout_plot_test.json";
  const std::string png_path = ::testing::TempDir() + "rollout_plot_test.png";
  std::remove(png_path.c_str());
  std::ofstream(json_path) << tiny_report().to_json().dump(1);
  const RolloutBenchReport report = load_rollout_report(json_path);
  EXPECT_EQ(report.plot(png_path), "wrote " + png_path);
  std::ifstream png(png_path, std::ios::binary);
  char magic[8] = {};
  png.read(magic, 8);
  EXPECT_EQ(std::string(magic + 1, 3), "PNG");
  std::ofstream(json_path) << "{\"bench\": \"rollout\",";  // truncated
  try {
    load_rollout_report(json_path);
    ADD_FAILURE() << "a truncated report was accepted";
  } catch (const Error& error) {
    EXPECT_NE(std::string(error.what()).find(json_path), std::string::npos) << error.what();
  }
}

}  // namespace
}  // namespace wc::attention
