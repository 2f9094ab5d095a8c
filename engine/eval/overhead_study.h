// `worldcast study overhead`: what HeadCast's one-time online classification costs as a share of
// a whole rollout, per resolution. See Note [Overhead study].
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "engine/eval/eval_options.h"

namespace wc::eval {

// Note [Overhead study]
// HeadCast casts every head once, online, in the block whose history first holds the window; the
// blocks before and after it pay nothing for the cast. The study runs the model benchmark
// (bench/model_bench.h: random weights of the model's config, since the classification
// computes every head's scores whatever the weights) under HeadCast and dense at each resolution:
// the policy's "classify" path over the warm-up, which holds the classification, and the median
// block time after it. A rollout of N frames is ceil(N / frames per block) blocks, so the
// classification's share of it is classify / (classify + blocks x HeadCast's block time), and
// "blocks of dense" says how many of dense's blocks the classification costs.

struct OverheadStudyOptions {
  std::vector<std::string> resolutions{""};  // the config's names; "" its default frame
  std::vector<int64_t> rollout_frames{100, 1000, 10000};  // each >= 1
  int warmup_blocks = 9;  // > the window's blocks, so the cast happens in the warm-up
  int timed_blocks = 5;   // >= 1
};

struct OverheadRow {
  std::string resolution;
  int64_t tokens_per_block = 0;
  int frames_per_block = 1;
  double classify_ms = 0.0;
  double headcast_block_ms = 0.0;  // median, after the cast
  double dense_block_ms = 0.0;     // median, after the window fills
  std::vector<double> shares;      // per rollout_frames: the classification's share of the rollout
};

struct OverheadStudy {
  std::string config;
  std::string device, dtype;
  std::vector<int64_t> rollout_frames;
  std::vector<OverheadRow> rows;
  nlohmann::json settings;  // HeadCast's

  nlohmann::json to_json() const;
  std::string markdown() const;
  // The share against the rollout's frames, one line per resolution (gnuplot-nox). Returns the
  // file written, or why no plot was made.
  std::string plot(const std::string& png) const;
};

// The classification's share of a rollout of `blocks` blocks.
double classification_share(double classify_ms, double block_ms, int64_t blocks);

// wc::Error ("study overhead: ...") for no resolution, a resolution the config lacks, a rollout
// of no frames, fewer than one timed block or warm-up block, or settings that force a cast (then
// nothing is classified), before any run.
void validate(const OverheadStudyOptions& study, const EvalOptions& options);

// wc::Error when HeadCast classified nothing in the warm-up (a window longer than it).
OverheadStudy run_overhead_study(const EvalOptions& options, const OverheadStudyOptions& study);

}  // namespace wc::eval
