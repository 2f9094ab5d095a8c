// Attention FLOPs of a cast, for the FLOP-ideal speedup (DESIGN.md §13): dense FLOPs over the
// policy's FLOPs for the same cast, window fill and geometry.
#pragma once

#include <cstdint>
#include <vector>

#include "engine/attention/headcast/head_type.h"
#include "engine/attention/headcast/spatial_cells.h"
#include "engine/attention/step_info.h"

namespace wc::attention {

// FLOPs of one head's attention in one forward pass for one batch item: 4·Tq·Tk·D (QKᵀ and PV),
// summed over the calls of its type, with `history_frames` frames in a full window store (Sink and
// Dummy hold one block). Dense and Global: all T queries against history + current.
double head_attention_flops(HeadType type, const BlockGeometry& geometry, int head_dim,
                            int64_t history_frames, const CellGrid& spatial_cells);

// Sum over a layer's heads.
double layer_attention_flops(const std::vector<HeadType>& types, const BlockGeometry& geometry,
                             int head_dim, int64_t history_frames, const CellGrid& spatial_cells);

}  // namespace wc::attention
