// `bench attention` as a library: FLOP counting from policy stats, resolution parsing, the CPU
// timer, and a whole run on a tiny CPU shape (fields present, ratios finite and positive; no
// wall-clock thresholds).
#include "bench/attention_bench.h"

#include <gtest/gtest.h>

#include <cmath>

#include "bench/attention_flops.h"
#include "bench/bench_timer.h"
#include "engine/core/error.h"

namespace wc::attention {
namespace {

bool finite_positive(const nlohmann::json& value) {
  return value.is_number() && std::isfinite(value.get<double>()) && value.get<double>() > 0.0;
}

TEST(AttentionFlops, CountsFourTqTkDPerHead) {
  EXPECT_DOUBLE_EQ(attention_call_flops(3, 5, 7), 4.0 * 3 * 5 * 7);

  ModelShape shape;
  shape.num_heads = 6;
  shape.head_dim = 8;
  shape.batch = 2;
  shape.geometry = BlockGeometry{2, 4, 6};  // N_f = 24, T = 48
  PolicyStats stats;
  auto& dense = stats.per_type[static_cast<size_t>(HeadType::kDense)];
  dense.heads = 6;
  dense.cached_tokens = 6 * 5 * 24;  // five frames of history per head
  const CellGrid whole = CellGrid::whole(shape.geometry);
  EXPECT_DOUBLE_EQ(policy_attention_flops(stats, shape, whole), 2 * 6 * 4.0 * 48 * (120 + 48) * 8);

  // A mixed cast: two one-frame heads, one spatial head on 2x2 cells, three heads of nothing yet.
  PolicyStats mixed;
  auto& sink = mixed.per_type[static_cast<size_t>(HeadType::kSink)];
  sink.heads = 2;
  sink.cached_tokens = 2 * 24;
  auto& spatial = mixed.per_type[static_cast<size_t>(HeadType::kSpatial)];
  spatial.heads = 1;
  spatial.cached_tokens = 3 * 24;  // three frames
  auto& neighbour = mixed.per_type[static_cast<size_t>(HeadType::kNeighbour)];
  neighbour.heads = 3;
  neighbour.cached_tokens = 0;
  const CellGrid cells = CellGrid::make(shape.geometry, 2, CellMode::kDivisor);
  // 6 cells of 2x2 tokens: each attends 2·4 queries to (3 + 2)·4 keys.
  const double spatial_flops = 6 * 4.0 * (2 * 4) * (5 * 4) * 8;
  const double expected =
      2 * (2 * 4.0 * 48 * (24 + 48) * 8 + spatial_flops + 3 * 4.0 * 48 * 48 * 8);
  EXPECT_DOUBLE_EQ(policy_attention_flops(mixed, shape, cells), expected);

  // Ragged 3x3 cells on a 5x7 grid: sum of squared cell sizes 2·9² + 3² + 2·6² + 2² = 247.
  ModelShape ragged_shape = shape;
  ragged_shape.batch = 1;
  ragged_shape.geometry = BlockGeometry{1, 5, 7};
  const CellGrid ragged = CellGrid::make(ragged_shape.geometry, 3, CellMode::kRagged);
  PolicyStats one;
  one.per_type[static_cast<size_t>(HeadType::kSpatial)].heads = 1;
  one.per_type[static_cast<size_t>(HeadType::kSpatial)].cached_tokens = 2 * 35;
  EXPECT_DOUBLE_EQ(policy_attention_flops(one, ragged_shape, ragged), 4.0 * 8 * 1 * 3 * 247);
}

TEST(AttentionBench, ParsesResolutions) {
  EXPECT_EQ(parse_resolution("480p"), std::make_pair(30, 52));
  EXPECT_EQ(parse_resolution("720p"), std::make_pair(45, 80));
  EXPECT_EQ(parse_resolution("1080p"), std::make_pair(68, 120));
  EXPECT_EQ(parse_resolution("8x10"), std::make_pair(10, 8));  // W columns x H rows
  for (const char* bad : {"", "8x", "x8", "0x5", "4k", "8x10x2", "-3x4", "99999x2"}) {
    EXPECT_THROW(parse_resolution(bad), Error) << bad;
  }
}

TEST(AttentionBench, WallClockTimerSumsBracketsPerPath) {
  auto timer = make_wall_clock_timer();
  timer->start_call();
  timer->begin("a");
  timer->begin("b");
  timer->end("b");
  timer->begin("b");
  timer->end("b");
  timer->end("a");
  timer->stop_call();
  const CallTiming timing = timer->finish_call();
  ASSERT_EQ(timing.paths_ms.size(), 2u);
  EXPECT_GE(timing.paths_ms.at("a"), timing.paths_ms.at("b"));
  EXPECT_GE(timing.total_ms, timing.paths_ms.at("a"));
  EXPECT_THROW(timer->end("never"), Error);
  EXPECT_NO_THROW(make_bench_timer(at::kCPU));
}

AttentionBenchOptions tiny_options() {
  AttentionBenchOptions options;
  options.resolution = "4x3";
  options.num_heads = 4;
  options.head_dim = 16;
  options.iters = 2;
  options.warmup = 1;
  options.headcast_cast = {{"mix", {1, 1, 1, 1}}};
  return options;
}

TEST(AttentionBench, TinyCpuRunReportsEveryField) {
  const AttentionBenchReport report = run_attention_bench(tiny_options());
  const nlohmann::json json = report.to_json();
  EXPECT_EQ(json["shape"]["tokens_per_frame"], 12);
  EXPECT_EQ(json["shape"]["window_frames"], 21);
  ASSERT_EQ(json["policies"].size(), 3u);
  EXPECT_EQ(json["policies"][0]["name"], "dense");
  for (const auto& policy : json["policies"]) {
    SCOPED_TRACE(policy["name"].get<std::string>());
    for (const char* field : {"total_ms", "flops", "tflops_per_s", "speedup", "flop_ideal_speedup",
                              "fraction_of_ideal"}) {
      EXPECT_TRUE(finite_positive(policy[field])) << field << " = " << policy[field];
    }
    EXPECT_FALSE(policy["paths_ms"].empty());
    int heads = 0;
    for (const auto& [type, count] : policy["heads_per_type"].items()) heads += count.get<int>();
    EXPECT_EQ(heads, 4);
  }
  const auto& dense = json["policies"][0];
  EXPECT_DOUBLE_EQ(dense["speedup"].get<double>(), 1.0);
  EXPECT_DOUBLE_EQ(dense["flop_ideal_speedup"].get<double>(), 1.0);
  // The full window: 21 frames of history + the 3-frame block, 36 queries, 4 heads.
  EXPECT_DOUBLE_EQ(dense["flops"].get<double>(), 4 * 4.0 * 36 * (21 * 12 + 36) * 16);
  EXPECT_TRUE(dense["classify_step_ms"].is_null());
  for (size_t i = 1; i < 3; ++i) {
    EXPECT_TRUE(json["policies"][i]["classified"].get<bool>());
    EXPECT_GT(json["policies"][i]["flop_ideal_speedup"].get<double>(), 1.0);
  }
  const auto& dummy = json["policies"][2];
  EXPECT_EQ(dummy["name"], "dummy");
  EXPECT_TRUE(dummy["paths_ms"].contains("sink_dummy"));
  EXPECT_TRUE(finite_positive(dummy["classify_step_ms"]));
  EXPECT_NE(report.table().find("dummy"), std::string::npos);
}

TEST(AttentionBench, OnlineHeadCastReportsClassificationOverhead) {
  AttentionBenchOptions options = tiny_options();
  options.policies = {"headcast"};
  options.headcast_cast = nullptr;
  const nlohmann::json json = run_attention_bench(options).to_json();
  ASSERT_EQ(json["policies"].size(), 2u);
  const auto& headcast = json["policies"][1];
  EXPECT_TRUE(headcast["classified"].get<bool>());
  EXPECT_TRUE(finite_positive(headcast["classify_step_ms"]));
  EXPECT_TRUE(headcast["classify_overhead_ms"].is_number());
  EXPECT_TRUE(headcast["classify_vs_dense_ms"].is_number());
}

TEST(AttentionBench, RejectsBadOptions) {
  AttentionBenchOptions options = tiny_options();
  options.iters = 0;
  EXPECT_THROW(run_attention_bench(options), Error);
  options = tiny_options();
  options.policies = {"no-such-policy"};
  EXPECT_THROW(run_attention_bench(options), Error);
  options = tiny_options();
  options.headcast_cast = {{"mix", {1, 1, 1}}};
  EXPECT_THROW(run_attention_bench(options), Error);
  if (!at::hasCUDA()) {
    options = tiny_options();
    options.device = at::Device(at::kCUDA, 0);
    EXPECT_THROW(run_attention_bench(options), Error);
  }
}

}  // namespace
}  // namespace wc::attention
