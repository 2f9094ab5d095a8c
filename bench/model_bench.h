// `worldcast bench model` as library code: end-to-end DiT time per AR block (all k + 1 forwards)
// for several resolutions and attention policies in one process, decode timed separately.
#pragma once

#include <ATen/ATen.h>

#include <cstdint>
#include <functional>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "engine/model/model_config.h"

namespace wc::rollout {

struct ModelBenchPolicy {
  std::string name;  // registry name
  nlohmann::json settings = nlohmann::json::object();
};

struct ModelBenchOptions {
  model::ModelConfig config;
  std::vector<std::string> resolutions{""};  // names of config.resolutions; "" = default frame
  std::vector<ModelBenchPolicy> policies;
  // A model with cross-attention: the policy every row's cross-attention goes through (dense or
  // annca, Note [AnnCA]) and its settings.
  ModelBenchPolicy cross_policy{"dense"};
  std::string prompt_file;  // the prompt's embeddings (model/prompt.h); "" = random from `seed`
  at::Device device = at::kCPU;
  at::ScalarType dtype = at::kFloat;
  int warmup_blocks = 9;  // untimed; past the window so casts have happened
  int timed_blocks = 5;
  int split_blocks = -1;  // blocks with the attention paths timed (-1: timed_blocks)
  // Where to write one kernel trace per (resolution, policy) of one further block
  // (trace_<resolution>_<policy>.json; empty: none). See kernel_trace.h.
  std::string trace_dir;
  uint64_t seed = 0;
};

struct ModelBenchRow {
  std::string resolution;
  std::string policy;
  nlohmann::json settings;
  int grid_h = 0, grid_w = 0;
  int64_t tokens_per_block = 0;
  int forwards_per_block = 0;
  double block_ms_median = 0.0, block_ms_p10 = 0.0, block_ms_p90 = 0.0;
  double decode_ms_median = 0.0;  // pixel-space models only (0 otherwise)
  double video_frames_per_block = 0.0;
  double fps = 0.0;  // video frames per block / DiT seconds per block (Dummy Forcing's FPS)
  int64_t cache_tokens = 0, cache_bytes = 0;
  std::string cross_policy;  // "" without cross-attention
  double prompt_kept = 1.0;  // the share of (frame, head, prompt token) triples attended
  // From `timed_blocks` further blocks with the policy's path timer attached (CUDA events on a
  // GPU): the attention paths' share of a block (gathers and scatters included) and the rest
  // (projections, MLPs, norms, RoPE), medians. Kept apart from block_ms, which runs untimed.
  double attention_ms_median = 0.0;
  double rest_ms_median = 0.0;
  std::map<std::string, double> path_ms_median;  // per attention path (the policy's names)
  // The policy's "classify" path over the warm-up blocks, which run with the path timer attached
  // (HeadCast's one-time online cast; 0 for a policy that does not classify online).
  double classify_ms = 0.0;
  std::vector<double> block_ms;        // every timed block, in order
  std::vector<double> split_block_ms;  // every split block (events, with the timer)
};

// Runs every (resolution, policy) pair on one randomly initialised model; `on_row` sees each
// row as soon as it is measured (progress for long runs).
std::vector<ModelBenchRow> run_model_bench(
    const ModelBenchOptions& options,
    const std::function<void(const ModelBenchRow&)>& on_row = nullptr);

nlohmann::json model_bench_json(const ModelBenchOptions& options,
                                const std::vector<ModelBenchRow>& rows);

}  // namespace wc::rollout
