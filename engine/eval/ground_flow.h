// Where a walk's world gains and loses ground that is not grass: what the view brings in at its
// edge, and what it carries of the ground it showed. See Note [Ground flow].
#pragma once

#include <cstdint>
#include <vector>

#include "engine/eval/terrain_groups.h"
#include "engine/game/game.h"

namespace wc::eval {

// Note [Ground flow]
// A world's non-grass share changes in two places only. A step that scrolls the view brings in a
// strip of ground at one edge (the game's camera step wide), where the world is invented; the
// rest of the view is the ground shown before, moved, and should stay what it was. So each
// scrolling step of a walk is read twice, from the frame before and after and the step's content
// shift (the model's own scroll, as the responsiveness estimator reads it; the game's camera for
// the game): "invented" is the non-grass share of the strip's pixels, "kept" the share of the
// carried pixels that were not grass before which are still in the same terrain group after. The
// sprite's and HUD's pixels, before or after, are left out. A world that empties either invents
// less than the game at its edge or lets what it drew fade into grass; the game keeps all of its
// ground but for the waves' and picked crystals' pixels.
struct GroundFlow {
  int64_t strip_pixels = 0, strip_non_grass = 0;
  int64_t carried_non_grass = 0, carried_kept = 0;

  void add(const GroundFlow& other);
  // The shares; -1 when nothing was counted.
  double invented_share() const;
  double kept_share() const;
};

// One step's flow: `before` and `after` are the groups of two width x height frames (row-major),
// `content_dx`/`content_dy` the shift of the content between them (after(y, x) shows before(y −
// dy, x − dx)); a still step (0, 0) counts nothing. `overlays` are left out.
GroundFlow ground_flow(const std::vector<TerrainGroup>& before,
                       const std::vector<TerrainGroup>& after, int width, int height,
                       int content_dx, int content_dy,
                       const std::vector<game::PixelRect>& overlays);

}  // namespace wc::eval
