// Attention FLOPs of one attend() call as a policy actually runs it (DESIGN.md §13): 4·Tq·Tk·D per
// head per call, with Tk read from the policy's stores (its stats), so a cast's FLOP-ideal speedup
// is dense FLOPs / policy FLOPs for the same window fill.
#pragma once

#include "engine/attention/attention_policy.h"
#include "engine/attention/headcast/spatial_cells.h"
#include "engine/attention/policy_stats.h"

namespace wc::attention {

// 4·Tq·Tk·D: QKᵀ and PV, one multiply-add (2 FLOPs) per element each.
double attention_call_flops(int64_t queries, int64_t keys, int64_t head_dim);

// Sum over all layers, heads and batch items of one attend() call. Every head of a type is taken
// to hold cached_tokens / heads history tokens (true for every shipped policy: a type's heads
// share one store per layer). Non-spatial heads attend all T block queries to history + current;
// Spatial heads attend each cell of `spatial_cells` to that cell in every held frame + current
// (held frames = tokens per head / N_f). Types without heads contribute nothing.
double policy_attention_flops(const PolicyStats& stats, const ModelShape& shape,
                              const CellGrid& spatial_cells);

}  // namespace wc::attention
