// See structure_flow.h and Note [Structure flow].
#include "engine/eval/structure_flow.h"

#include <cstdlib>
#include <string>

#include "engine/core/error.h"

namespace wc::eval {
void StructureFlow::add(const StructureFlow& other) {
  steps += other.steps;
  edge_blocks += other.edge_blocks;
  edge_known += other.edge_known;
  edge_broken_first_half += other.edge_broken_first_half;
  carried_broken += other.carried_broken;
  carried_broken_made += other.carried_broken_made;
}

StructureFlow structure_flow(const std::vector<TerrainGroup>& before,
                             const std::vector<TerrainGroup>& after, int width, int height,
                             int content_dx, int content_dy, GridPhase phase,
                             const std::vector<game::PixelRect>& overlays,
                             const TileBlockSurvey& survey) {
  const size_t pixels = static_cast<size_t>(width) * static_cast<size_t>(height);
  const auto step_ok = [](int d) { return d == 0 || std::abs(d) == kStructurePatch; };
  if (width <= 0 || height <= 0 || before.size() != pixels || after.size() != pixels ||
      !step_ok(content_dx) || !step_ok(content_dy) || (content_dx != 0 && content_dy != 0)) {
    throw Error("structure_flow", "frames of " + std::to_string(before.size()) + " and " +
                                      std::to_string(after.size()) + " pixels for " +
                                      std::to_string(width) + "x" + std::to_string(height) +
                                      ", content shift (" + std::to_string(content_dx) + ", " +
                                      std::to_string(content_dy) + ")");
  }
  // The half of an edge block the view carried: the side away from the edge the step revealed.
  BlockHalf inner = BlockHalf::kLeft;
  if (content_dx > 0) inner = BlockHalf::kRight;
  if (content_dy < 0) inner = BlockHalf::kTop;
  if (content_dy > 0) inner = BlockHalf::kBottom;

  StructureFlow flow;
  flow.steps = 1;
  for (int y = phase.y; y + kStructureBlock <= height; y += kStructureBlock) {
    for (int x = phase.x; x + kStructureBlock <= width; x += kStructureBlock) {
      if (overlaps_any(overlays, x, y, kStructureBlock)) continue;
      const BlockKey key = block_at(after, width, x, y);
      if (plain_block(key)) continue;
      const bool known = survey.knows(key);
      const int sx = x - content_dx, sy = y - content_dy;  // where its ground was
      const bool edge =
          sx < 0 || sy < 0 || sx + kStructureBlock > width || sy + kStructureBlock > height;
      if (edge) {
        ++flow.edge_blocks;
        flow.edge_known += known;
        flow.edge_broken_first_half += !known && !survey.knows_half(key, inner);
        continue;
      }
      if (known || overlaps_any(overlays, sx, sy, kStructureBlock)) continue;
      ++flow.carried_broken;
      flow.carried_broken_made += block_at(before, width, sx, sy) != key;
    }
  }
  return flow;
}

}  // namespace wc::eval
