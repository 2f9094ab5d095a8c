// See ground_flow.h and Note [Ground flow].
#include "engine/eval/ground_flow.h"

#include "engine/core/error.h"

namespace wc::eval {
namespace {

bool in_overlay(const std::vector<game::PixelRect>& overlays, int x, int y) {
  for (const game::PixelRect& r : overlays) {
    if (x >= r.x && x < r.x + r.width && y >= r.y && y < r.y + r.height) return true;
  }
  return false;
}

}  // namespace

void GroundFlow::add(const GroundFlow& other) {
  strip_pixels += other.strip_pixels;
  strip_non_grass += other.strip_non_grass;
  carried_non_grass += other.carried_non_grass;
  carried_kept += other.carried_kept;
}

double GroundFlow::invented_share() const {
  return strip_pixels > 0 ? static_cast<double>(strip_non_grass) / strip_pixels : -1.0;
}

double GroundFlow::kept_share() const {
  return carried_non_grass > 0 ? static_cast<double>(carried_kept) / carried_non_grass : -1.0;
}

GroundFlow ground_flow(const std::vector<TerrainGroup>& before,
                       const std::vector<TerrainGroup>& after, int width, int height,
                       int content_dx, int content_dy,
                       const std::vector<game::PixelRect>& overlays) {
  const size_t pixels = static_cast<size_t>(width) * static_cast<size_t>(height);
  if (width <= 0 || height <= 0 || before.size() != pixels || after.size() != pixels) {
    throw Error("ground_flow", "frames of " + std::to_string(before.size()) + " and " +
                                   std::to_string(after.size()) + " pixels for " +
                                   std::to_string(width) + "x" + std::to_string(height));
  }
  GroundFlow flow;
  if (content_dx == 0 && content_dy == 0) return flow;
  for (int y = 0; y < height; ++y) {
    for (int x = 0; x < width; ++x) {
      if (in_overlay(overlays, x, y)) continue;
      const TerrainGroup now = after[static_cast<size_t>(y) * width + x];
      const int sx = x - content_dx, sy = y - content_dy;
      if (sx < 0 || sx >= width || sy < 0 || sy >= height) {
        ++flow.strip_pixels;
        flow.strip_non_grass += now != TerrainGroup::kGrass;
        continue;
      }
      if (in_overlay(overlays, sx, sy)) continue;
      const TerrainGroup was = before[static_cast<size_t>(sy) * width + sx];
      if (was == TerrainGroup::kGrass) continue;
      ++flow.carried_non_grass;
      flow.carried_kept += now == was;
    }
  }
  return flow;
}

}  // namespace wc::eval
