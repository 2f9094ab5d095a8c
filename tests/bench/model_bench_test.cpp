// The model benchmark on the CPU (tiny config): one row per (resolution, policy), times that
// make sense together, the attention/rest split from its own timed blocks, and the JSON.
#include "bench/model_bench.h"

#include <gtest/gtest.h>

#include "tests/model/model_test_util.h"

namespace wc::rollout {
namespace {

TEST(ModelBench, RowsCarryBlockTimesAndAnAttentionRestSplit) {
  ModelBenchOptions options;
  options.config = testing::tiny_config();
  options.resolutions = {"", "wide"};
  options.policies = {{"dense", {{"window", 3}}}, {"dummy", nlohmann::json::object()}};
  options.warmup_blocks = 4;
  options.timed_blocks = 2;
  int seen = 0;
  const std::vector<ModelBenchRow> rows =
      run_model_bench(options, [&](const ModelBenchRow&) { ++seen; });
  ASSERT_EQ(rows.size(), 4u);
  EXPECT_EQ(seen, 4);
  for (const ModelBenchRow& row : rows) {
    SCOPED_TRACE(row.resolution + " " + row.policy);
    EXPECT_EQ(row.forwards_per_block, options.config.sampler.steps + 1);
    EXPECT_GT(row.block_ms_median, 0.0);
    EXPECT_LE(row.block_ms_p10, row.block_ms_p90);
    EXPECT_GT(row.fps, 0.0);
    // Every forward attends, and every forward has projections and MLPs besides.
    EXPECT_GT(row.attention_ms_median, 0.0);
    EXPECT_GT(row.rest_ms_median, 0.0);
    EXPECT_GT(row.cache_tokens, 0);
  }
  EXPECT_EQ(rows[0].resolution, "16x16");
  EXPECT_EQ(rows[2].resolution, "wide");
  EXPECT_EQ(rows[2].tokens_per_block, 2 * rows[0].tokens_per_block);

  const nlohmann::json json = model_bench_json(options, rows);
  ASSERT_EQ(json["rows"].size(), 4u);
  EXPECT_EQ(json["rows"][1]["policy"], "dummy");
  EXPECT_GT(json["rows"][1]["attention_ms_median"].get<double>(), 0.0);
  EXPECT_GT(json["rows"][1]["rest_ms_median"].get<double>(), 0.0);
}

// HeadCast casts its heads online in a warm-up block, so its row carries the classification's
// time; a policy that does not classify, or a forced cast, carries none.
TEST(ModelBench, HeadCastsOnlineCastIsTimedInTheWarmUp) {
  ModelBenchOptions options;
  options.config = testing::tiny_config();
  const int heads = options.config.heads;
  options.policies = {{"headcast", {{"window", 3}}},
                      {"dense", {{"window", 3}}},
                      {"headcast", {{"window", 3}, {"cast", {{"mix", {0, 0, 0, heads}}}}}}};
  options.warmup_blocks = 5;
  options.timed_blocks = 1;
  options.split_blocks = 0;
  const std::vector<ModelBenchRow> rows = run_model_bench(options);
  ASSERT_EQ(rows.size(), 3u);
  EXPECT_GT(rows[0].classify_ms, 0.0);
  EXPECT_EQ(rows[1].classify_ms, 0.0);
  EXPECT_EQ(rows[2].classify_ms, 0.0);
  EXPECT_EQ(model_bench_json(options, rows)["rows"][0]["classify_ms"].get<double>(),
            rows[0].classify_ms);
  // Too short a warm-up to fill the window: nothing classified yet.
  options.policies.resize(1);
  options.warmup_blocks = 1;
  EXPECT_EQ(run_model_bench(options)[0].classify_ms, 0.0);
}

TEST(ModelBench, AModelWithCrossAttentionRunsItThroughTheCrossPolicy) {
  ModelBenchOptions options;
  options.config = testing::tiny_config();
  options.config.cross_attention.tokens = 40;
  options.config.cross_attention.width = 24;
  options.policies = {{"dense", {{"window", 3}}}, {"annsa", {{"window", 3}}}};
  options.warmup_blocks = 3;
  options.timed_blocks = 1;
  options.split_blocks = 0;
  options.cross_policy = {"annca", {{"bits", 6}, {"min_kept", 2}}};
  const std::vector<ModelBenchRow> rows = run_model_bench(options);
  ASSERT_EQ(rows.size(), 2u);
  for (const ModelBenchRow& row : rows) {
    SCOPED_TRACE(row.policy);
    EXPECT_EQ(row.cross_policy, "annca");
    EXPECT_GT(row.prompt_kept, 0.0);
    EXPECT_LE(row.prompt_kept, 1.0);
    EXPECT_GT(row.block_ms_median, 0.0);
  }
  const nlohmann::json json = model_bench_json(options, rows);
  EXPECT_EQ(json["rows"][0]["cross_policy"], "annca");
  // A model without cross-attention reports none.
  options.config = testing::tiny_config();
  options.cross_policy = {"dense"};
  options.policies = {{"dense", {{"window", 3}}}};
  const std::vector<ModelBenchRow> plain = run_model_bench(options);
  EXPECT_TRUE(plain[0].cross_policy.empty());
  EXPECT_TRUE(model_bench_json(options, plain)["rows"][0]["prompt_kept"].is_null());
}

}  // namespace
}  // namespace wc::rollout
