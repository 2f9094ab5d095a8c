// Test helpers that steer the player: breadth-first search over tiles and the actions that walk
// a tile path centre to centre (the player's 12x12 hitbox then never touches a blocking tile).
#pragma once

#include <functional>
#include <optional>
#include <vector>

#include "engine/game/game.h"

namespace wc::game::testing {

using TilePath = std::vector<TileCoord>;  // from the start tile to the goal, both included

// The shortest path (4-connected, through walkable tiles, never over an uncollected crystal
// except as the goal) from the player's tile to the nearest tile satisfying `goal`, searching
// within `radius` tiles of the start. The player must stand at its tile's centre.
std::optional<TilePath> path_to_nearest(const Game& game,
                                        const std::function<bool(TileCoord)>& goal, int radius);

// The actions that walk `path`: kTileSize / kPlayerSpeed steps per tile.
std::vector<Action> actions_along(const TilePath& path);
// `path` backwards.
TilePath reversed(TilePath path);

void play(Game& game, const std::vector<Action>& actions);

// The direction of a unit tile offset (dx, dy) as an action.
Action action_towards(int dx, int dy);

}  // namespace wc::game::testing
