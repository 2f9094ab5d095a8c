// Whether a step should scroll in the world a frame shows: the game's collision rule read off the
// frame's own pixels, so that a model that has walked off the seeded view is judged against the
// walls it drew, not the game's (DESIGN.md §13, world content: blocked steps).
#pragma once

#include <vector>

#include "engine/eval/terrain_groups.h"
#include "engine/eval/tile_structure.h"
#include "engine/game/action.h"
#include "engine/game/game.h"

namespace wc::eval {

// Note [Own walls]: after a few steps off the seeded view the ground a model shows is its own
// invention, so whether a key should scroll it is a question of that ground: a wall of the game's
// that the model never drew should not stop it, and a lake it drew should. The game's rule
// (game.h): a move is taken unless the player's 12x12 hitbox, one step on, touches a water, wall
// or tree tile. Read off a frame: the player stands at the screen's centre; tiles are the frame's
// 16x16 squares at a grid phase (tile_structure.h); a tile blocks when any of its pixels outside
// the screen overlays is water, wall or tree (the game draws such a pixel on no grass, sand or
// crystal tile, and on every water, wall and tree tile). At the game's own phase this is the
// game's rule exactly. A model's phase is not known (it may draw ground off the tile grid), so a
// step is read at all four phases; when they disagree (a blocker within half a tile of the step),
// at the phase the frame is drawn at: the one its tile structure reads best at (best_structure),
// which is the game's own phase on the game's frames that have edges to read.

// Whether `move` (a move, not kNone) would be stopped in the frame whose terrain groups are
// `groups` (width x height, row-major), its tiles at `phase`, pixels inside `overlays` unread. A
// tile with no pixel outside the overlays reads as free.
bool step_blocked_at(const std::vector<TerrainGroup>& groups, int width, int height,
                     GridPhase phase, game::Action move,
                     const std::vector<game::PixelRect>& overlays);

struct StepReading {
  bool blocked = false;
  bool by_drawn_phase = false;  // the phases disagreed; read at `drawn_phase`
};

// `move` read as Note [Own walls] says: at all four grid phases, and at `drawn_phase` when they
// disagree.
StepReading read_step(const std::vector<TerrainGroup>& groups, int width, int height,
                      game::Action move, const std::vector<game::PixelRect>& overlays,
                      GridPhase drawn_phase);

}  // namespace wc::eval
