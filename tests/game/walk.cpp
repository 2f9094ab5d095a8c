// Breadth-first search and path following for the game tests.
#include "tests/game/walk.h"

#include <algorithm>
#include <cstdlib>
#include <deque>
#include <map>

namespace wc::game::testing {

std::optional<TilePath> path_to_nearest(const Game& game,
                                        const std::function<bool(TileCoord)>& goal, int radius) {
  const TileCoord start = game.player_tile();
  const auto key = [](TileCoord c) { return std::make_pair(c.x, c.y); };
  std::map<std::pair<int, int>, TileCoord> parent{{key(start), start}};
  std::deque<TileCoord> queue{start};
  while (!queue.empty()) {
    const TileCoord c = queue.front();
    queue.pop_front();
    if (c != start && goal(c)) {
      TilePath path{c};
      while (path.back() != start) path.push_back(parent.at(key(path.back())));
      std::reverse(path.begin(), path.end());
      return path;
    }
    for (const TileCoord n : {TileCoord{c.x + 1, c.y}, TileCoord{c.x - 1, c.y},
                              TileCoord{c.x, c.y + 1}, TileCoord{c.x, c.y - 1}}) {
      if (std::abs(n.x - start.x) > radius || std::abs(n.y - start.y) > radius) continue;
      const Tile tile = game.tile_at(n.x, n.y);
      if (blocks_movement(tile)) continue;
      // Only the goal may be an uncollected crystal, so walking never changes the count by
      // accident.
      if (tile == Tile::kCrystal && !goal(n)) continue;
      if (!parent.emplace(key(n), c).second) continue;
      queue.push_back(n);
    }
  }
  return std::nullopt;
}

Action action_towards(int dx, int dy) {
  if (dx > 0) return Action::kRight;
  if (dx < 0) return Action::kLeft;
  if (dy > 0) return Action::kDown;
  if (dy < 0) return Action::kUp;
  return Action::kNone;
}

std::vector<Action> actions_along(const TilePath& path) {
  std::vector<Action> actions;
  for (size_t i = 1; i < path.size(); ++i) {
    const Action action = action_towards(path[i].x - path[i - 1].x, path[i].y - path[i - 1].y);
    actions.insert(actions.end(), kTileSize / kPlayerSpeed, action);
  }
  return actions;
}

TilePath reversed(TilePath path) {
  std::reverse(path.begin(), path.end());
  return path;
}

void play(Game& game, const std::vector<Action>& actions) {
  for (const Action action : actions) game.step(action);
}

}  // namespace wc::game::testing
