// The game's contract: determinism, frame format, blocking tiles, the scrolling camera and a
// world that looks the same when revisited.
#include "engine/game/game.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <stdexcept>

#include "engine/game/hash.h"
#include "engine/game/throughput.h"
#include "tests/game/walk.h"

namespace wc::game {
namespace {

using testing::actions_along;
using testing::path_to_nearest;
using testing::play;

uint64_t frame_hash(const Game& game) {
  return hash_bytes(game.frame().data(), game.frame().size());
}

uint32_t pixel_at(const Game& game, int x, int y) {
  uint32_t pixel;
  std::memcpy(&pixel, game.frame().data() + (static_cast<size_t>(y) * game.width() + x) * 4, 4);
  return pixel;
}

// The tile under frame pixel (x, y).
Tile tile_under(const Game& game, int x, int y) {
  return game.tile_at(floor_div(game.camera_x() + x, kTileSize),
                      floor_div(game.camera_y() + y, kTileSize));
}

// Pixels that may legitimately change while the view stands still: animated water, the HUD and
// the player sprite (its facing and stride).
bool is_static_scenery(const Game& game, int x, int y) {
  return !game.hud_rect().contains(x, y) && !game.player_rect().contains(x, y) &&
         tile_under(game, x, y) != Tile::kWater;
}

TEST(Game, SameSeedAndActionsGiveIdenticalFrames) {
  Game a(GameConfig{128, 128, 42});
  Game b(GameConfig{128, 128, 42});
  ASSERT_EQ(frame_hash(a), frame_hash(b));
  for (int64_t i = 0; i < 600; ++i) {
    a.step(throughput_action(i));
    b.step(throughput_action(i));
    ASSERT_EQ(frame_hash(a), frame_hash(b)) << "frame " << i;
  }
  EXPECT_EQ(a.frame_index(), 600u);
  EXPECT_EQ(a.player_x(), b.player_x());
  EXPECT_EQ(a.crystals_collected(), b.crystals_collected());
}

TEST(Game, DifferentSeedsGiveDifferentFrames) {
  Game a(GameConfig{128, 128, 1});
  Game b(GameConfig{128, 128, 2});
  EXPECT_NE(frame_hash(a), frame_hash(b));
  int differing = 0;
  for (int64_t i = 0; i < 200; ++i) {
    a.step(throughput_action(i));
    b.step(throughput_action(i));
    differing += frame_hash(a) != frame_hash(b);
  }
  EXPECT_EQ(differing, 200);
}

TEST(Game, ActionsChangeTheFrames) {
  Game still(GameConfig{128, 128, 3});
  Game moving(GameConfig{128, 128, 3});
  for (int64_t i = 0; i < 100; ++i) {
    still.step(Action::kNone);
    moving.step(throughput_action(i));
  }
  EXPECT_NE(frame_hash(still), frame_hash(moving));
  EXPECT_NE(still.player_x() * 100000 + still.player_y(),
            moving.player_x() * 100000 + moving.player_y());
}

TEST(Game, ResetStartsTheSameRunAgain) {
  Game game(GameConfig{128, 128, 9});
  const uint64_t first = frame_hash(game);
  play(game, std::vector<Action>(40, Action::kRight));
  ASSERT_GT(game.frame_index(), 0u);
  game.reset(9);
  EXPECT_EQ(game.frame_index(), 0u);
  EXPECT_EQ(game.crystals_collected(), 0);
  EXPECT_EQ(frame_hash(game), first);
  game.reset(10);
  EXPECT_EQ(game.seed(), 10u);
  EXPECT_EQ(frame_hash(game), frame_hash(Game(GameConfig{128, 128, 10})));
}

TEST(Game, FramesAreOpaqueRgbaOfTheConfiguredSize) {
  Game game(GameConfig{160, 96, 4});
  EXPECT_EQ(game.width(), 160);
  EXPECT_EQ(game.height(), 96);
  play(game, std::vector<Action>(30, Action::kDown));
  ASSERT_EQ(game.frame().size(), 160u * 96u * 4u);
  for (size_t i = 3; i < game.frame().size(); i += 4) ASSERT_EQ(game.frame()[i], 255) << i;
}

TEST(Game, RejectsBadFrameSizes) {
  EXPECT_THROW(Game(GameConfig{0, 128, 0}), std::invalid_argument);
  EXPECT_THROW(Game(GameConfig{128, -5, 0}), std::invalid_argument);
  EXPECT_THROW(Game(GameConfig{kMaxFrameSide + 1, 128, 0}), std::invalid_argument);
}

TEST(Game, PlayerStartsCentredOnTheSpawnTile) {
  for (uint64_t seed = 0; seed < 20; ++seed) {
    Game game(GameConfig{128, 128, seed});
    EXPECT_EQ(game.player_tile(), game.world().spawn());
    EXPECT_EQ(floor_mod(game.player_x(), kTileSize), kTileSize / 2);
    EXPECT_EQ(game.camera_x() + 64, game.player_x());
  }
}

TEST(Game, WalkAnimationCyclesWhileWalkingAndStopsWhenStanding) {
  Game game(GameConfig{128, 128, 0});
  EXPECT_EQ(game.walk_frame(), 0);
  std::vector<int> poses;
  // Walk back and forth one tile, so it never bumps into anything.
  const int steps_per_tile = kTileSize / kPlayerSpeed;
  for (int i = 0; i < 4 * kWalkFramesPerPose * steps_per_tile; ++i) {
    game.step((i / steps_per_tile) % 2 == 0 ? Action::kRight : Action::kLeft);
    if (!game.walking()) GTEST_SKIP() << "spawn neighbourhood is not open (world changed?)";
    poses.push_back(game.walk_frame());
  }
  EXPECT_EQ(poses[0], 1);
  EXPECT_EQ(poses[kWalkFramesPerPose], 0);
  // Turning around does not restart the cycle: it is still one walk.
  EXPECT_EQ(poses[2 * kWalkFramesPerPose], 2);
  EXPECT_EQ(poses[3 * kWalkFramesPerPose], 0);
  EXPECT_EQ(poses[3 * kWalkFramesPerPose - 1], 2);
  EXPECT_EQ(game.facing(), Facing::kLeft);
  game.step(Action::kNone);
  EXPECT_EQ(game.walk_frame(), 0);
  EXPECT_FALSE(game.walking());
  EXPECT_EQ(game.facing(), Facing::kLeft);  // standing keeps the last facing
}

// Finds, over a few seeds, a reachable tile next to a tile of kind `blocker`, walks there and
// pushes into the blocker: the player must not move into it.
void expect_blocks(Tile blocker) {
  for (uint64_t seed = 0; seed < 30; ++seed) {
    Game game(GameConfig{128, 128, seed});
    int dx = 0, dy = 0;
    const auto next_to_blocker = [&](TileCoord c) {
      for (const auto& [ox, oy] : {std::pair{1, 0}, {-1, 0}, {0, 1}, {0, -1}}) {
        if (game.tile_at(c.x + ox, c.y + oy) == blocker) {
          dx = ox;
          dy = oy;
          return true;
        }
      }
      return false;
    };
    const auto path = path_to_nearest(game, next_to_blocker, 24);
    if (!path) continue;
    ASSERT_TRUE(next_to_blocker(path->back()));  // sets dx, dy for the goal tile
    play(game, actions_along(*path));
    ASSERT_EQ(game.player_tile(), path->back());
    const int start_x = game.player_x(), start_y = game.player_y();
    for (int i = 0; i < 20; ++i) game.step(testing::action_towards(dx, dy));
    // From a tile centre the hitbox edge is kTileSize/2 - kPlayerHalfExtent = 2 px from the
    // blocker, less than a step: moves are all or nothing, so the player does not move at all.
    static_assert(kTileSize / 2 - kPlayerHalfExtent < kPlayerSpeed);
    EXPECT_EQ(game.player_x(), start_x) << tile_name(blocker);
    EXPECT_EQ(game.player_y(), start_y) << tile_name(blocker);
    EXPECT_EQ(game.player_tile(), path->back());
    EXPECT_FALSE(game.walking());
    EXPECT_EQ(game.facing(), dx > 0   ? Facing::kRight
                             : dx < 0 ? Facing::kLeft
                             : dy > 0 ? Facing::kDown
                                      : Facing::kUp);
    return;
  }
  FAIL() << "no reachable " << tile_name(blocker) << " found in 30 seeds";
}

TEST(Game, WallsBlockMovement) {
  expect_blocks(Tile::kWall);
}
TEST(Game, TreesBlockMovement) {
  expect_blocks(Tile::kTree);
}
TEST(Game, WaterBlocksMovement) {
  expect_blocks(Tile::kWater);
}

// Walks to a tile with open ground `kRoom` tiles in direction (dx, dy), then checks that one step
// scrolls the view by exactly kPlayerSpeed pixels: the new frame is the old one shifted.
void expect_scroll(int dx, int dy) {
  constexpr int kRoom = 3;
  Game game(GameConfig{128, 128, 5});
  const auto open_ahead = [&](TileCoord c) {
    for (int k = 1; k <= kRoom; ++k) {
      const Tile tile = game.tile_at(c.x + dx * k, c.y + dy * k);
      if (blocks_movement(tile) || tile == Tile::kCrystal) return false;
    }
    // From a tile centre the 12x12 hitbox stays inside this row of tiles, so only it matters.
    return true;
  };
  const auto path = path_to_nearest(game, open_ahead, 20);
  ASSERT_TRUE(path.has_value());
  play(game, actions_along(*path));
  const Game before = game;
  game.step(testing::action_towards(dx, dy));
  ASSERT_TRUE(game.walking());
  EXPECT_EQ(game.camera_x() - before.camera_x(), dx * kPlayerSpeed);
  EXPECT_EQ(game.camera_y() - before.camera_y(), dy * kPlayerSpeed);
  EXPECT_EQ(game.player_x() - game.camera_x(), game.width() / 2);  // still centred
  EXPECT_EQ(game.player_y() - game.camera_y(), game.height() / 2);
  int compared = 0;
  for (int y = 0; y < game.height(); ++y) {
    for (int x = 0; x < game.width(); ++x) {
      const int ox = x + dx * kPlayerSpeed, oy = y + dy * kPlayerSpeed;
      if (ox < 0 || oy < 0 || ox >= game.width() || oy >= game.height()) continue;
      if (!is_static_scenery(game, x, y) || !is_static_scenery(before, ox, oy)) continue;
      ASSERT_EQ(pixel_at(game, x, y), pixel_at(before, ox, oy)) << "pixel " << x << "," << y;
      ++compared;
    }
  }
  EXPECT_GT(compared, game.width() * game.height() / 3);
  // And the frame did change: the scroll is visible.
  EXPECT_NE(frame_hash(game), frame_hash(before));
}

TEST(Camera, ScrollsByThePlayerSpeedWhenWalkingRight) {
  expect_scroll(1, 0);
}
TEST(Camera, ScrollsByThePlayerSpeedWhenWalkingLeft) {
  expect_scroll(-1, 0);
}
TEST(Camera, ScrollsByThePlayerSpeedWhenWalkingDown) {
  expect_scroll(0, 1);
}
TEST(Camera, ScrollsByThePlayerSpeedWhenWalkingUp) {
  expect_scroll(0, -1);
}

TEST(Camera, StaysPutWhenStanding) {
  Game game(GameConfig{128, 128, 5});
  const int x = game.camera_x(), y = game.camera_y();
  play(game, std::vector<Action>(10, Action::kNone));
  EXPECT_EQ(game.camera_x(), x);
  EXPECT_EQ(game.camera_y(), y);
}

TEST(World, RevisitedRegionLooksTheSame) {
  for (uint64_t seed : {11u, 12u, 13u}) {
    Game game(GameConfig{128, 128, seed});
    const TileCoord home = game.player_tile();
    // Far enough that the starting view (8x8 tiles) is entirely off screen.
    const auto far_away = [&](TileCoord c) {
      return std::abs(c.x - home.x) >= 10 || std::abs(c.y - home.y) >= 10;
    };
    const auto path = path_to_nearest(game, far_away, 30);
    ASSERT_TRUE(path.has_value()) << "seed " << seed;
    const Game before = game;
    play(game, actions_along(*path));
    ASSERT_TRUE(far_away(game.player_tile()));
    play(game, actions_along(testing::reversed(*path)));
    ASSERT_EQ(game.player_x(), before.player_x());
    ASSERT_EQ(game.player_y(), before.player_y());
    EXPECT_EQ(game.crystals_collected(), before.crystals_collected());
    EXPECT_GT(game.frame_index(), 30u);  // time moved on (water has animated since)
    for (int ty = home.y - 6; ty <= home.y + 6; ++ty) {
      for (int tx = home.x - 6; tx <= home.x + 6; ++tx) {
        ASSERT_EQ(game.tile_at(tx, ty), before.tile_at(tx, ty));
      }
    }
    int compared = 0;
    for (int y = 0; y < game.height(); ++y) {
      for (int x = 0; x < game.width(); ++x) {
        if (!is_static_scenery(game, x, y)) continue;
        ASSERT_EQ(pixel_at(game, x, y), pixel_at(before, x, y))
            << "seed " << seed << " pixel " << x << "," << y;
        ++compared;
      }
    }
    EXPECT_GT(compared, 1000);
  }
}

}  // namespace
}  // namespace wc::game
