// HeadCast's one-time classification measurement: for sampled query rows of the classification
// block, the full-window output against the sink, dummy and spatial restricted outputs.
#pragma once

#include <ATen/ATen.h>

#include <cstdint>
#include <vector>

#include "engine/attention/headcast/head_cast.h"
#include "engine/attention/headcast/spatial_cells.h"
#include "engine/attention/step_info.h"

namespace wc::attention {

struct ClassifyInputs {
  at::Tensor q;                      // [B, heads, T, D]: the block's queries of these heads
  at::Tensor k, v;                   // [B, heads, S·N, D]: history slots, then the current block
  std::vector<int64_t> slot_frames;  // frame index of each of the S slots (current block last)
  BlockGeometry geometry;
  int64_t block = 0;  // the current block's index
};

// Note [Spatial proxy]
// The paper scores a Spatial candidate on a sliding (2r+1)x(2r+1) neighbourhood of each query but
// deploys non-overlapping cells (a sliding window cannot batch onto one dense attention call). The
// two differ most for a query near a cell edge: its neighbourhood reaches across the edge, its
// cell does not. At Wan's 30x52-token latents with 10x10 cells few queries sit near an edge; at
// our 16x16 grid, cut into 8x8 cells, half of them do, and in a scrolling game a head that follows
// content moving one token a frame reaches across an edge within a few frames. A cell also gives
// a query inside it more context than the neighbourhood, so the proxy errs both ways: it casts
// heads Spatial that the cells starve and leaves Global heads the cells would serve. "cells"
// scores the deployed path itself (each query's own cell in every slot), so M_sp, P5 and e
// describe what the head will compute. The retired pixel model's card measured the difference
// (`git show 149e37f:assets/models/game-small-moves/MODEL_CARD.md`); the default is the paper's
// neighbourhood (Note [Paper defaults]).

// The spatial restriction classification measures: the paper's sliding neighbourhood
// |y'−y| ≤ radius, |x'−x| ≤ radius, or the deployed cells themselves.
struct SpatialProxy {
  int radius = 2;
  const CellGrid* cells = nullptr;  // when set: a query's own cell, and radius is unused
};

// Evidence per head of `inputs` (in order), from the query rows `rows` (indices into T).
// Restricted contexts: sink = block 0 + current; dummy = block − 1 + current; spatial = the
// proxy's keys in every slot (an explicit boolean mask).
std::vector<HeadEvidence> classify_heads(const ClassifyInputs& inputs,
                                         const std::vector<int64_t>& rows,
                                         const SpatialProxy& proxy);

// `sample` distinct rows of [0, tokens) drawn with `seed` (all rows when sample is 0 or ≥ tokens),
// ascending.
std::vector<int64_t> sample_query_rows(int64_t tokens, int64_t sample, uint64_t seed);

// The p-quantile (0..1) of values with linear interpolation between order statistics.
double percentile(std::vector<double> values, double p);

}  // namespace wc::attention
