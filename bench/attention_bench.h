// `worldcast bench attention`: one attention layer at Wan 2.1-1.3B shapes, every policy against
// the dense baseline in the same process, with per-path times, speedups and FLOP-ideal speedups
// (DESIGN.md §13). The CLI (ui/cli/bench_attention.cpp) only parses arguments into these options.
#pragma once

#include <ATen/ATen.h>

#include <cstdint>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

namespace wc::attention {

struct AttentionBenchOptions {
  std::string resolution = "480p";  // 480p, 720p, 1080p, or WxH in tokens (W columns, H rows)
  int frames_per_block = 3;
  int num_heads = 12;
  int head_dim = 128;
  int batch = 1;
  int window_blocks = 7;  // sink block + 6 rolling blocks: "window" = 21 frames
  std::vector<std::string> policies = {"dense", "headcast", "dummy"};
  // HeadCast's forced cast ({"mix": [...]} or {"layers": [[...]]}); null = classify online.
  nlohmann::json headcast_cast = {{"mix", {2, 2, 4, 4}}};
  // HeadCast's Spatial cells (Note [Spatial cells]): "rounded" (the paper's, the default),
  // "divisor" or "ragged", 10 tokens an edge.
  std::string cell_mode = "rounded";
  int iters = 20;
  int warmup = 5;
  at::Device device = at::kCPU;
  at::ScalarType dtype = at::kFloat;
  uint64_t seed = 0;
};

// Token grid (rows, columns) for a resolution name; throws wc::Error for a bad one.
std::pair<int, int> parse_resolution(const std::string& resolution);

struct PolicyBenchResult {
  std::string name;
  nlohmann::json settings;  // as the policy reports them
  bool classified = false;
  std::map<std::string, int> heads_per_type;  // the cast (all heads of the layer)
  int64_t cached_tokens = 0;
  int64_t cached_bytes = 0;
  double total_ms = 0.0;                   // median over iters
  std::map<std::string, double> paths_ms;  // median per path over iters
  double flops = 0.0;                      // attention FLOPs of one attend() call
  double tflops_per_s = 0.0;
  double speedup = 0.0;             // dense total_ms / total_ms
  double flop_ideal_speedup = 0.0;  // dense flops / flops
  double fraction_of_ideal = 0.0;   // speedup / flop_ideal_speedup
  // Policies that classify online: the classifying attend() call, once, after one untimed
  // rehearsal of the whole warm-up (so one-time kernel loads stay out).
  std::optional<double> classify_step_ms;
  // The policy's "classify" path time when it brackets one, else classify_step_ms - total_ms.
  std::optional<double> classify_overhead_ms;
  std::optional<double> classify_vs_dense_ms;  // classify_step_ms - dense total_ms
  int64_t blocks_before_timing = 0;            // blocks committed before the timed block
};

struct AttentionBenchReport {
  AttentionBenchOptions options;
  int grid_h = 0, grid_w = 0;
  std::string device_name;
  std::vector<PolicyBenchResult> results;  // dense first

  nlohmann::json to_json() const;
  std::string table() const;
};

// Runs the benchmark. Dense is always run first (added if missing) as the baseline.
AttentionBenchReport run_attention_bench(const AttentionBenchOptions& options);

}  // namespace wc::attention
