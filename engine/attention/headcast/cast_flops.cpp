// See cast_flops.h.
#include "engine/attention/headcast/cast_flops.h"

#include <algorithm>

namespace wc::attention {

double head_attention_flops(HeadType type, const BlockGeometry& g, int head_dim,
                            int64_t history_frames, const CellGrid& spatial_cells) {
  const double d = head_dim;
  const double queries = g.tokens_per_block();
  const double frame_tokens = g.tokens_per_frame();
  switch (type) {
    case HeadType::kSink:
    case HeadType::kDummy:
      return 4.0 * queries * (std::min<int64_t>(history_frames, g.frames) + g.frames) *
             frame_tokens * d;
    case HeadType::kSpatial: {
      double flops = 0;
      for (const CellGroup& cell : spatial_cells.groups()) {
        const double tokens = cell.cell_tokens();
        flops +=
            4.0 * cell.cells() * (g.frames * tokens) * ((history_frames + g.frames) * tokens) * d;
      }
      return flops;
    }
    default:
      return 4.0 * queries * (history_frames + g.frames) * frame_tokens * d;
  }
}

double layer_attention_flops(const std::vector<HeadType>& types, const BlockGeometry& geometry,
                             int head_dim, int64_t history_frames, const CellGrid& spatial_cells) {
  double flops = 0;
  for (HeadType type : types) {
    flops += head_attention_flops(type, geometry, head_dim, history_frames, spatial_cells);
  }
  return flops;
}

}  // namespace wc::attention
