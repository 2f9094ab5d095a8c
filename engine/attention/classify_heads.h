// HeadCast's one-time classification measurement: for sampled query rows of the classification
// block, the full-window output against the sink, dummy and spatial restricted outputs.
#pragma once

#include <ATen/ATen.h>

#include <cstdint>
#include <vector>

#include "engine/attention/head_cast.h"
#include "engine/attention/step_info.h"

namespace wc::attention {

struct ClassifyInputs {
  at::Tensor q;                      // [B, heads, T, D]: the block's queries of these heads
  at::Tensor k, v;                   // [B, heads, S·N, D]: history slots, then the current block
  std::vector<int64_t> slot_frames;  // frame index of each of the S slots (current block last)
  BlockGeometry geometry;
  int64_t block = 0;  // the current block's index
};

// Evidence per head of `inputs` (in order), from the query rows `rows` (indices into T).
// Restricted contexts: sink = block 0 + current; dummy = block − 1 + current; spatial = keys with
// |y'−y| ≤ radius and |x'−x| ≤ radius in every slot (an explicit boolean mask).
std::vector<HeadEvidence> classify_heads(const ClassifyInputs& inputs,
                                         const std::vector<int64_t>& rows, int radius);

// `sample` distinct rows of [0, tokens) drawn with `seed` (all rows when sample is 0 or ≥ tokens),
// ascending.
std::vector<int64_t> sample_query_rows(int64_t tokens, int64_t sample, uint64_t seed);

// The p-quantile (0..1) of values with linear interpolation between order statistics.
double percentile(std::vector<double> values, double p);

}  // namespace wc::attention
