// Where a walk's broken tiles come from: the view's edge, or the ground it carries. See Note
// [Structure flow].
#pragma once

#include <cstdint>
#include <vector>

#include "engine/eval/terrain_groups.h"
#include "engine/eval/tile_structure.h"
#include "engine/game/game.h"

namespace wc::eval {

// Note [Structure flow]
// A block the game never draws (Note [Tile structure]) is made at one of three moments, and each
// asks something different of the model. Read each step from the frames before and after it, the
// content shift between them and the after frame's grid phase:
// - An edge block is a scored block whose outer half the step brought into view: the camera moves
//   half a tile, so a tile's first half comes in one step (its block still hangs over the edge,
//   unread) and its second half the next, beside the first. Of the edge blocks that are broken,
//   "first half" ones have a carried half that no tile of the game has: the tile was broken when
//   its first half came in, two quarters drawn side by side that do not belong together; the rest
//   were broken by the second half, drawn against a first half the model could see.
// - A carried block lies wholly in ground the view showed before. Broken, it was either already
//   broken there (the same block a step earlier: "kept") or the step changed it: ground the model
//   carried across the view redrawn into a block the game never draws ("made").
// Blocks whose ground a step earlier lay under the sprite or the HUD are not read as carried.
// A still step carries every block in place.
struct StructureFlow {
  int64_t steps = 0;
  int64_t edge_blocks = 0, edge_known = 0, edge_broken_first_half = 0;
  int64_t carried_broken = 0, carried_broken_made = 0;

  void add(const StructureFlow& other);
};

// One step's flow: `before` and `after` are the groups of two width x height frames (row-major),
// `content_dx`/`content_dy` the shift of the content between them (after(y, x) shows before(y −
// dy, x − dx); each 0 or ±kStructurePatch), `phase` the after frame's grid phase. `overlays` are
// left out.
StructureFlow structure_flow(const std::vector<TerrainGroup>& before,
                             const std::vector<TerrainGroup>& after, int width, int height,
                             int content_dx, int content_dy, GridPhase phase,
                             const std::vector<game::PixelRect>& overlays,
                             const TileBlockSurvey& survey);

}  // namespace wc::eval
