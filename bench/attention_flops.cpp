// See attention_flops.h.
#include "bench/attention_flops.h"

#include "engine/core/error.h"

namespace wc::attention {

double attention_call_flops(int64_t queries, int64_t keys, int64_t head_dim) {
  return 4.0 * static_cast<double>(queries) * static_cast<double>(keys) *
         static_cast<double>(head_dim);
}

double policy_attention_flops(const PolicyStats& stats, const ModelShape& shape,
                              const CellGrid& spatial_cells) {
  const BlockGeometry& g = shape.geometry;
  const int64_t frame_tokens = g.tokens_per_frame();
  const int64_t queries = g.tokens_per_block();
  double flops = 0.0;
  for (int i = 0; i < kHeadTypeCount; ++i) {
    const TypeStats& type = stats.per_type[static_cast<size_t>(i)];
    if (type.heads == 0) continue;
    const int64_t history = type.cached_tokens / type.heads;
    double per_head = 0.0;
    if (static_cast<HeadType>(i) == HeadType::kSpatial) {
      if (history % frame_tokens != 0) {
        throw Error("attention flops", "spatial heads hold a partial frame");
      }
      const int64_t frames = history / frame_tokens + g.frames;
      for (const CellGroup& group : spatial_cells.groups()) {
        const int64_t cell = group.cell_tokens();
        per_head +=
            group.cells() * attention_call_flops(g.frames * cell, frames * cell, shape.head_dim);
      }
    } else {
      per_head = attention_call_flops(queries, history + queries, shape.head_dim);
    }
    flops += per_head * type.heads * shape.batch;
  }
  return flops;
}

}  // namespace wc::attention
