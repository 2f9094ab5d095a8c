// `bench rollout`'s library on a tiny CPU rollout: every policy runs, dense-unbounded stops where
// told, TempCache's cache stays under its budget while dense grows, flatness is computed as
// defined.
#include <gtest/gtest.h>

#include <vector>

#include "engine/attention/bench/rollout_bench.h"
#include "engine/core/error.h"

namespace wc::attention {
namespace {

TEST(RolloutBench, FlatnessIsTheRatioOfMedians) {
  std::vector<double> frames(400, 1.0);
  for (size_t i = 300; i < 400; ++i) frames[i] = 3.0;
  EXPECT_DOUBLE_EQ(frame_time_flatness(frames), 3.0);
  EXPECT_DOUBLE_EQ(frame_time_flatness(std::vector<double>(299, 1.0)), 0.0);
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

}  // namespace
}  // namespace wc::attention
