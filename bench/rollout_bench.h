// `worldcast bench rollout`: an attention-only rollout of thousands of AR blocks at Wan 2.1-1.3B
// attention shapes, every policy on the same synthetic keys, measuring per-block time and cache
// size against frames (DESIGN.md §13 frame-time flatness). The CLI (ui/cli/bench_rollout.cpp)
// only parses arguments into these options.
#pragma once

#include <ATen/ATen.h>

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <utility>
#include <vector>

namespace wc::attention {

// Note [Rollout key process]
// Keys stand in for a game world seen by a moving camera. Per (head, position) the frame's tokens
// are split by row into four regions, each with its own process (keys are unit-scale Gaussians
// plus 5% per-frame observation noise, so identical content has cosine ≈ 0.997):
//  - static (top quarter of the rows: HUD, sky): one fixed key per position;
//  - drifting (next quarter): an AR(1) process per position, k_t = ρ k_{t−1} + √(1−ρ²) η with
//    ρ = 0.995 (lighting, slow deformation), cosine ≈ 0.995 between consecutive frames;
//  - scrolling (next 40%): a field of columns that moves one column left every 4 frames, a fresh
//    random column entering at the right (the world scrolling past): the co-located match fails at
//    each shift and the bucket search finds the shifted column; every 4 frames a column is new;
//  - fresh (the remaining rows, ~10%): new random keys every frame (particles, noise) that never
//    merge: what grows an unbounded TempCache without a budget.
// Queries and values are fresh Gaussians. Every policy sees the same sequence (one seed).
struct RolloutBenchOptions {
  std::string resolution = "480p";  // see parse_resolution()
  int frames_per_block = 3;
  int num_heads = 12;
  int head_dim = 128;
  int num_layers = 1;
  int steps = 1;  // attention calls per layer and block (denoising steps + clean)
  int64_t blocks = 1000;
  int every = 10;       // cache / memory sample period, blocks
  int64_t window = 21;  // frames of dense-window and headcast (sink block included)
  // Policy runs: dense (unbounded), dense-window, headcast, tempcache, combined; annsa (AnnSA
  // over the window) and fast-ar (TempCache + AnnSA) on request.
  std::vector<std::string> policies = {"dense", "dense-window", "headcast", "tempcache",
                                       "combined"};
  nlohmann::json headcast_cast = {{"mix", {2, 2, 4, 4}}};
  nlohmann::json tempcache =
      nlohmann::json::object();                   // extra tempcache / combined / fast-ar settings
  nlohmann::json ann = nlohmann::json::object();  // extra ann_* settings of annsa and fast-ar
  int64_t budget_frames = 21;       // default TempCache budget, frames' worth of entries per head
  int64_t dense_max_blocks = 0;     // dense-unbounded stops after this many blocks (0 = no limit)
  double dense_max_block_ms = 0.0;  // ... or when a block takes longer (0 = no limit)
  double dense_max_gib = 0.0;       // ... or when its cache exceeds this (0 = no limit)
  // Every k blocks (0 = never), the relative error of layer 0's clean-pass output against dense
  // attention over the whole uncompressed history (kept on the side: small shapes only).
  int error_every = 0;
  // On CUDA, replay each block from a CUDA graph once the policy allows it (Note [Block graph],
  // Note [Replayed commit]), as the game's sampler does; blocks that cannot be replayed run
  // eagerly. The graph is recorded outside the timed region; its replays are timed.
  bool cuda_graphs = true;
  at::Device device = at::kCPU;
  at::ScalarType dtype = at::kFloat;
  uint64_t seed = 0;
};

struct RolloutSample {
  int64_t block = 0;
  int64_t frames = 0;         // frames committed after this block
  int64_t cache_bytes = 0;    // the policy's stats (K and V held)
  int64_t cache_entries = 0;  // per batch item, all layers and heads
  int64_t device_bytes = 0;   // allocated on the device now (CUDA only)
};

struct RolloutPolicyResult {
  std::string label;   // dense, dense-window, headcast, tempcache, combined
  std::string policy;  // registry name
  nlohmann::json settings;
  std::vector<double> block_ms;  // per block (attend calls + commit)
  std::vector<RolloutSample> samples;
  bool stopped_early = false;
  std::string stop_reason;
  int64_t peak_device_bytes = 0;    // CUDA caching allocator peak during this run (0 on CPU)
  double flatness = 0.0;            // median frame time [n−100, n) / [100, 200); 0 if n < 300
  double flatness_worst = 0.0;      // the worst of that ratio over n (frame_time_flatness_worst)
  double ms_per_frame_first = 0.0;  // median frame time over [100, 200)
  double ms_per_frame_last = 0.0;   // median over [n−100, n)
  double slope_ms_per_1000_frames = 0.0;  // least squares of frame time on frame index
  double bytes_per_frame = 0.0;           // least squares of cache bytes on frames
  int64_t merges = 0, evictions = 0;
  double mean_group_size = 0.0;
  int64_t graph_replayed_blocks = 0;  // blocks replayed from a CUDA graph
  int64_t graph_recordings = 0;
  // (block, |o − o_dense| / |o_dense|) every error_every blocks; see RolloutBenchOptions.
  std::vector<std::pair<int64_t, double>> output_error;
};

struct RolloutBenchReport {
  RolloutBenchOptions options;
  int grid_h = 0, grid_w = 0;
  std::string device_name;
  std::vector<RolloutPolicyResult> results;

  nlohmann::json to_json() const;
  // The report saved by to_json, validated: a wrong, missing or unknown field throws wc::Error
  // naming `file` and the field (rollout_report_json.cpp).
  static RolloutBenchReport from_json(const nlohmann::json& json, const std::string& file);
  std::string table() const;
  // Time per frame and memory (device memory if measured, else the K/V cache) against frames as
  // a PNG through gnuplot (gnuplot-nox); returns a message (the file written, or why no plot was
  // made). rollout_report_plot.cpp.
  std::string plot(const std::string& png) const;
};

// Reads and validates a report written by `bench rollout --json` (errors name `path`).
RolloutBenchReport load_rollout_report(const std::string& path);

RolloutBenchReport run_rollout_bench(const RolloutBenchOptions& options);

// Frame-time flatness: frame_time_flatness and frame_time_flatness_worst in engine/core/timing.h.

}  // namespace wc::attention
