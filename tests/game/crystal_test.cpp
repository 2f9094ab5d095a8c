// Crystals: collected by walking over them, counted once, and gone for good.
#include <gtest/gtest.h>

#include <cstdlib>
#include <cstring>

#include "engine/game/game.h"
#include "engine/game/hud.h"
#include "engine/game/palette.h"
#include "tests/game/walk.h"

namespace wc::game {
namespace {

using testing::actions_along;
using testing::path_to_nearest;
using testing::play;

// How many pixels of the crystal's body colour lie on tile `tile`'s screen area.
int crystal_pixels_on_tile(const Game& game, TileCoord tile) {
  int count = 0;
  for (int y = 0; y < kTileSize; ++y) {
    for (int x = 0; x < kTileSize; ++x) {
      const int sx = tile.x * kTileSize + x - game.camera_x();
      const int sy = tile.y * kTileSize + y - game.camera_y();
      if (sx < 0 || sy < 0 || sx >= game.width() || sy >= game.height()) continue;
      uint32_t pixel;
      std::memcpy(&pixel, game.frame().data() + (static_cast<size_t>(sy) * game.width() + sx) * 4,
                  4);
      count += pixel == palette::kCrystal;
    }
  }
  return count;
}

TEST(Crystal, CollectedCrystalStaysGoneAfterWalkingAwayAndBack) {
  Game game(GameConfig{128, 128, 21});
  const auto is_crystal = [&](TileCoord c) { return game.tile_at(c.x, c.y) == Tile::kCrystal; };
  const auto to_crystal = path_to_nearest(game, is_crystal, 30);
  ASSERT_TRUE(to_crystal.has_value());
  const TileCoord crystal = to_crystal->back();
  // Stop one tile short to see it drawn before it is taken.
  const std::vector<Action> full = actions_along(*to_crystal);
  const size_t last_tile = full.size() - kTileSize / kPlayerSpeed;
  play(game, std::vector<Action>(full.begin(), full.begin() + last_tile));
  EXPECT_GT(crystal_pixels_on_tile(game, crystal), 10);
  EXPECT_EQ(game.crystals_collected(), 0);

  play(game, std::vector<Action>(full.begin() + last_tile, full.end()));
  ASSERT_EQ(game.player_tile(), crystal);
  EXPECT_EQ(game.crystals_collected(), 1);
  EXPECT_TRUE(game.crystal_collected_at(crystal));
  EXPECT_EQ(game.tile_at(crystal.x, crystal.y), Tile::kGrass);
  EXPECT_EQ(game.world().tile(crystal.x, crystal.y), Tile::kCrystal);  // the world is unchanged

  // Walk far away (off screen) and back onto the same tile.
  const auto far_away = [&](TileCoord c) {
    return std::abs(c.x - crystal.x) >= 10 || std::abs(c.y - crystal.y) >= 10;
  };
  const auto away = path_to_nearest(game, far_away, 30);
  ASSERT_TRUE(away.has_value());
  play(game, actions_along(*away));
  EXPECT_EQ(crystal_pixels_on_tile(game, crystal), 0);  // off screen
  play(game, actions_along(testing::reversed(*away)));
  ASSERT_EQ(game.player_tile(), crystal);
  EXPECT_EQ(game.crystals_collected(), 1);
  EXPECT_EQ(game.tile_at(crystal.x, crystal.y), Tile::kGrass);

  // Step off it: the tile is drawn as plain ground now.
  const auto off = path_to_nearest(
      game, [&](TileCoord c) { return c != crystal; }, 2);
  ASSERT_TRUE(off.has_value());
  play(game, actions_along(*off));
  EXPECT_EQ(crystal_pixels_on_tile(game, crystal), 0);
  // Walking over it again does not count it again.
  play(game, actions_along(testing::reversed(*off)));
  EXPECT_EQ(game.crystals_collected(), 1);
}

TEST(Crystal, ResetBringsCrystalsBack) {
  Game game(GameConfig{128, 128, 21});
  const auto path = path_to_nearest(
      game, [&](TileCoord c) { return game.tile_at(c.x, c.y) == Tile::kCrystal; }, 30);
  ASSERT_TRUE(path.has_value());
  play(game, actions_along(*path));
  ASSERT_EQ(game.crystals_collected(), 1);
  game.reset(21);
  EXPECT_EQ(game.crystals_collected(), 0);
  EXPECT_FALSE(game.crystal_collected_at(path->back()));
  EXPECT_EQ(game.tile_at(path->back().x, path->back().y), Tile::kCrystal);
}

TEST(Crystal, HudCounterChangesWhenACrystalIsCollected) {
  Game game(GameConfig{128, 128, 21});
  const PixelRect hud = game.hud_rect();
  ASSERT_GT(hud.width, 0);
  const auto hud_pixels = [&](const Game& g) {
    std::vector<uint8_t> pixels;
    for (int y = hud.y; y < hud.y + hud.height; ++y) {
      const uint8_t* row = g.frame().data() + (static_cast<size_t>(y) * g.width() + hud.x) * 4;
      pixels.insert(pixels.end(), row, row + hud.width * 4);
    }
    return pixels;
  };
  const auto path = path_to_nearest(
      game, [&](TileCoord c) { return game.tile_at(c.x, c.y) == Tile::kCrystal; }, 30);
  ASSERT_TRUE(path.has_value());
  const std::vector<Action> actions = actions_along(*path);
  const size_t last_tile = actions.size() - kTileSize / kPlayerSpeed;
  play(game, std::vector<Action>(actions.begin(), actions.begin() + last_tile));
  // The crystal is taken once the player's centre crosses onto its tile, mid-stride: the HUD must
  // change on exactly that frame and on no other.
  int changes = 0;
  for (size_t i = last_tile; i < actions.size(); ++i) {
    const std::vector<uint8_t> hud_before = hud_pixels(game);
    const int count_before = game.crystals_collected();
    game.step(actions[i]);
    const bool counted = game.crystals_collected() != count_before;
    EXPECT_EQ(hud_pixels(game) != hud_before, counted) << "step " << i;
    changes += counted;
  }
  EXPECT_EQ(changes, 1);
  EXPECT_EQ(game.crystals_collected(), 1);
  // With the HUD hidden the corner is plain scenery.
  Game hidden(GameConfig{128, 128, 21, /*show_hud=*/false});
  EXPECT_EQ(hidden.hud_rect().width, 0);
  EXPECT_NE(hud_pixels(hidden), hud_pixels(Game(GameConfig{128, 128, 21})));
}

}  // namespace
}  // namespace wc::game
