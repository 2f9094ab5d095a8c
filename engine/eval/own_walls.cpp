// See own_walls.h.
#include "engine/eval/own_walls.h"

#include <algorithm>
#include <stdexcept>

#include "engine/eval/phase_correlation.h"
#include "engine/game/hash.h"

namespace wc::eval {
namespace {

using game::floor_div;

bool blocker(TerrainGroup group) {
  return group == TerrainGroup::kWater || group == TerrainGroup::kWall ||
         group == TerrainGroup::kTree;
}

bool inside_any(const std::vector<game::PixelRect>& rects, int x, int y) {
  for (const game::PixelRect& r : rects) {
    if (r.contains(x, y)) return true;
  }
  return false;
}

// Whether the tile whose screen square starts at (x0, y0) holds a blocker pixel in view.
bool tile_blocks(const std::vector<TerrainGroup>& groups, int width, int height, int x0, int y0,
                 const std::vector<game::PixelRect>& overlays) {
  const int xa = std::max(0, x0), xb = std::min(width, x0 + game::kTileSize);
  const int ya = std::max(0, y0), yb = std::min(height, y0 + game::kTileSize);
  for (int y = ya; y < yb; ++y) {
    for (int x = xa; x < xb; ++x) {
      if (blocker(groups[static_cast<size_t>(y) * width + x]) && !inside_any(overlays, x, y)) {
        return true;
      }
    }
  }
  return false;
}

}  // namespace

bool step_blocked_at(const std::vector<TerrainGroup>& groups, int width, int height,
                     GridPhase phase, game::Action move,
                     const std::vector<game::PixelRect>& overlays) {
  if (groups.size() != static_cast<size_t>(width) * height) {
    throw std::invalid_argument("step_blocked_at: groups do not match the frame size");
  }
  if (move == game::Action::kNone) throw std::invalid_argument("step_blocked_at: not a move");
  // The player moves against the content's shift: a step right scrolls the world left.
  const Shift content = content_shift_of(move, game::kPlayerSpeed);
  const int dx = -content.dx, dy = -content.dy;
  // The hitbox one step on, in screen pixels: [x0, x1) x [y0, y1).
  const int x0 = width / 2 + dx - game::kPlayerHalfExtent, x1 = x0 + 2 * game::kPlayerHalfExtent;
  const int y0 = height / 2 + dy - game::kPlayerHalfExtent, y1 = y0 + 2 * game::kPlayerHalfExtent;
  const int t = game::kTileSize;
  for (int ty = floor_div(y0 - phase.y, t); ty <= floor_div(y1 - 1 - phase.y, t); ++ty) {
    for (int tx = floor_div(x0 - phase.x, t); tx <= floor_div(x1 - 1 - phase.x, t); ++tx) {
      if (tile_blocks(groups, width, height, phase.x + tx * t, phase.y + ty * t, overlays)) {
        return true;
      }
    }
  }
  return false;
}

StepReading read_step(const std::vector<TerrainGroup>& groups, int width, int height,
                      game::Action move, const std::vector<game::PixelRect>& overlays,
                      GridPhase drawn_phase) {
  int blocked = 0;
  for (GridPhase phase : kGridPhases) {
    blocked += step_blocked_at(groups, width, height, phase, move, overlays);
  }
  if (blocked == 0) return {false, false};
  if (blocked == static_cast<int>(kGridPhases.size())) return {true, false};
  return {step_blocked_at(groups, width, height, drawn_phase, move, overlays), true};
}

}  // namespace wc::eval
