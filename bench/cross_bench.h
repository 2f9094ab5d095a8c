// `worldcast bench cross` as library code: one cross-attention layer of a block's queries against
// a prompt, dense against AnnCA (Note [AnnCA]) on planted inputs, timed in one run, with AnnCA's
// recall of each query's true top prompt tokens, the share it kept and its output error.
#pragma once

#include <ATen/ATen.h>

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>

namespace wc::attention {

// Planted inputs: the prompt's tokens lie around `groups` directions per head (keys = a direction
// + noise); each frame's queries lie around `groups_per_frame` of them, so a query's true top
// tokens are its direction's and a frame draws on a few groups of the prompt, as a frame of a
// long prompt's video draws on a few of its phrases.
struct CrossBenchOptions {
  int grid_h = 45, grid_w = 80;  // 720P latent tokens per frame
  int frames = 3;                // frames per block
  int heads = 12, head_dim = 128;
  int64_t prompt = 512;
  int groups = 32;
  int groups_per_frame = 2;
  double noise = 0.3;  // of the planted keys and queries, against unit-variance directions
  int top = 16;        // recall of each query's true top-k tokens
  nlohmann::json annca = nlohmann::json::object();  // AnnCA settings
  int warmup = 5, iters = 20;
  at::Device device = at::kCPU;
  at::ScalarType dtype = at::kFloat;
  uint64_t seed = 0;
};

struct CrossBenchResult {
  double dense_ms = 0.0;  // median per call
  double annca_ms = 0.0;
  double recall = 0.0;          // share of each query's true top-k tokens AnnCA kept
  double kept_share = 0.0;      // share of (frame, head, token) triples kept
  double relative_error = 0.0;  // ‖annca − dense‖ / ‖dense‖ over the block
  nlohmann::json settings;      // AnnCA's, as it ran

  double speedup() const { return annca_ms > 0.0 ? dense_ms / annca_ms : 0.0; }
  std::string table(const CrossBenchOptions& options) const;
  nlohmann::json to_json(const CrossBenchOptions& options) const;
};

CrossBenchResult run_cross_bench(const CrossBenchOptions& options);

}  // namespace wc::attention
