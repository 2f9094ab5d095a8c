// How the world metric reads a frame, on the real game's frames: every palette colour's terrain
// group, the tile blocks at the game's grid phase and half a tile off, the game's collision rule
// read off its own pixels, the sprite's poses and the HUD's digits, and frames broken on purpose.
#include <gtest/gtest.h>

#include <cstring>
#include <stdexcept>
#include <vector>

#include "engine/eval/overlay_glyphs.h"
#include "engine/eval/own_walls.h"
#include "engine/eval/player_actions.h"
#include "engine/eval/terrain_groups.h"
#include "engine/eval/tile_structure.h"
#include "engine/game/canvas.h"
#include "engine/game/game.h"
#include "engine/game/hud.h"
#include "engine/game/palette.h"

namespace wc::eval {
namespace {

using G = TerrainGroup;
namespace p = game::palette;

constexpr int kSide = 128;

void unpack(uint32_t rgba, uint8_t out[4]) {
  std::memcpy(out, &rgba, 4);
}

G group_of(uint32_t rgba) {
  uint8_t c[4];
  unpack(rgba, c);
  return terrain_group_of(c[0], c[1], c[2]);
}

game::Game make_game(uint64_t seed) {
  game::GameConfig config;
  config.width = kSide;
  config.height = kSide;
  config.seed = seed;
  return game::Game(config);
}

const TileBlockSurvey& survey() {
  static const TileBlockSurvey s = survey_tile_blocks(kSide, kSide);
  return s;
}

TEST(TerrainGroups, EveryPaletteColourHasItsGroup) {
  const std::vector<std::pair<uint32_t, G>> expected = {
      {p::kGrass, G::kGrass},         {p::kGrassTuft, G::kGrass},
      {p::kSand, G::kSand},           {p::kSandDot, G::kSand},
      {p::kWater, G::kWater},         {p::kWaterWave, G::kWater},
      {p::kWall, G::kWall},           {p::kWallMortar, G::kWall},
      {p::kWallChip, G::kWall},       {p::kLeaf, G::kTree},
      {p::kLeafLight, G::kTree},      {p::kLeafDark, G::kTree},
      {p::kTrunk, G::kTree},          {p::kCrystal, G::kCrystal},
      {p::kCrystalDark, G::kCrystal}, {p::kCrystalShine, G::kCrystal},
      {p::kOutline, G::kOther},       {p::kSkin, G::kOther},
      {p::kHair, G::kOther},          {p::kShirt, G::kOther},
      {p::kTrousers, G::kOther},      {p::kShoe, G::kOther},
      {p::kPack, G::kOther},          {p::kHudBack, G::kOther},
      {p::kHudBorder, G::kOther},     {p::kHudText, G::kOther},
  };
  ASSERT_EQ(game_palette_groups().size(), expected.size());
  for (const auto& [colour, group] : expected) {
    EXPECT_EQ(group_of(colour), group) << std::hex << colour;
    uint8_t c[4];
    unpack(colour, c);
    EXPECT_EQ(nearest_palette_colour(c[0], c[1], c[2]), colour) << std::hex << colour;
  }
  EXPECT_STREQ(terrain_group_name(G::kCrystal), "crystal");
  // Off the palette: the nearest colour's group.
  EXPECT_EQ(terrain_group_of(50, 100, 200), G::kWater);  // kWater is (46, 102, 204)
  EXPECT_EQ(terrain_group_of(225, 210, 135), G::kSand);
  EXPECT_EQ(terrain_group_of(100, 175, 70), G::kGrass);
}

// Every colour the game draws is one of the listed ones (a new palette colour must get a group).
TEST(TerrainGroups, TheGameDrawsOnlyListedColours) {
  for (uint64_t seed : {1000000ull, 1000003ull, 1000006ull}) {
    game::Game game = make_game(seed);
    for (game::Action action : player_actions(seed, 150)) {
      game.step(action);
      const std::vector<uint8_t>& f = game.frame();
      for (size_t i = 0; i < f.size(); i += 4) {
        uint32_t pixel;
        std::memcpy(&pixel, &f[i], 4);
        ASSERT_EQ(nearest_palette_colour(f[i], f[i + 1], f[i + 2]), pixel)
            << "seed " << seed << " pixel " << i / 4;
      }
    }
  }
}

TEST(TerrainGroups, HistogramLeavesOutOverlaysAndMeasuresDistance) {
  const game::Game game = make_game(1000000);
  const std::vector<G> groups = terrain_groups(game.frame().data(), kSide, kSide);
  const std::vector<game::PixelRect> overlays = game::screen_overlays(kSide, kSide);
  const TerrainHistogram all = terrain_histogram(groups, kSide, kSide, {});
  const TerrainHistogram outside = terrain_histogram(groups, kSide, kSide, overlays);
  int64_t n_all = 0, n_outside = 0;
  for (int i = 0; i < kTerrainGroupCount; ++i) n_all += all[i], n_outside += outside[i];
  EXPECT_EQ(n_all, kSide * kSide);
  EXPECT_EQ(n_outside, kSide * kSide - 16 * 16 - 36 * 14);
  EXPECT_EQ(total_variation(outside, outside), 0.0);
  TerrainHistogram grass{};
  grass[0] = 100;
  TerrainHistogram water{};
  water[2] = 50;
  EXPECT_EQ(total_variation(grass, water), 1.0);
  TerrainHistogram half{};
  half[0] = 50;
  half[2] = 50;
  EXPECT_DOUBLE_EQ(total_variation(grass, half), 0.5);
  EXPECT_DOUBLE_EQ(non_grass_share(half), 0.5);
  EXPECT_EQ(non_grass_share(grass), 0.0);
  EXPECT_EQ(total_variation(TerrainHistogram{}, grass), 1.0);
}

TEST(TileStructure, PlainBlocksAreOneGroupInEveryPatch) {
  const BlockKey water = 1u << static_cast<int>(G::kWater);
  EXPECT_TRUE(plain_block(water * 0x01010101u));
  EXPECT_FALSE(plain_block(water * 0x00010101u));
  const BlockKey grass_and_tree = (1u << 0) | (1u << static_cast<int>(G::kTree));
  EXPECT_FALSE(plain_block(grass_and_tree * 0x01010101u));
}

struct PhaseScores {
  int64_t scored = 0, known = 0;
  double share() const { return scored == 0 ? 0.0 : static_cast<double>(known) / scored; }
};

// Note [Tile structure]: the game's frames at their own grid phase are all known blocks; read
// half a tile off (as a model whose world slipped by 8 pixels would draw them), almost none are.
TEST(TileStructure, TheGameIsWholeTilesAtItsPhaseAndNotHalfATileOff) {
  const std::vector<game::PixelRect> overlays = game::screen_overlays(kSide, kSide);
  EXPECT_EQ(survey().size(), 6u);  // four plain kinds, a tree, a crystal
  EXPECT_EQ(survey().frames(), int64_t{kStructureSurveySeeds} * kStructureSurveyFrames);
  PhaseScores at_phase, off_x, off_y, off_both;
  int best_at_phase = 0, frames = 0;
  for (uint64_t seed = 1000000; seed < 1000008; ++seed) {
    game::Game game = make_game(seed);
    for (game::Action action : player_actions(seed ^ 0x5A, 200)) {
      game.step(action);
      const std::vector<G> groups = terrain_groups(game.frame().data(), kSide, kSide);
      const GridPhase phase = game_grid_phase(game);
      ASSERT_TRUE(phase.x == 0 || phase.x == kStructurePatch);
      ASSERT_TRUE(phase.y == 0 || phase.y == kStructurePatch);
      const auto add = [&](PhaseScores& scores, GridPhase at) {
        const StructureScore s = score_structure(groups, kSide, kSide, at, overlays, survey());
        scores.scored += s.scored;
        scores.known += s.known;
      };
      const int h = kStructurePatch;
      add(at_phase, phase);
      add(off_x, {h - phase.x, phase.y});
      add(off_y, {phase.x, h - phase.y});
      add(off_both, {h - phase.x, h - phase.y});
      const StructureScore best = best_structure(groups, kSide, kSide, overlays, survey());
      const StructureScore own = score_structure(groups, kSide, kSide, phase, overlays, survey());
      EXPECT_EQ(best.known, own.known);
      best_at_phase += best.phase == phase || own.scored == 0;
      ++frames;
    }
  }
  EXPECT_GT(at_phase.scored, 1000);
  EXPECT_EQ(at_phase.known, at_phase.scored);
  EXPECT_GT(best_at_phase, frames * 9 / 10);
  EXPECT_LT(off_both.share(), 0.10) << off_both.known << " of " << off_both.scored;
  // Half a tile off along one axis, two trees side by side (or one above the other) read as one
  // tree: each of their halves holds grass, outline and leaves. Forests are 45% trees.
  EXPECT_LT(off_x.share(), 0.15) << off_x.known << " of " << off_x.scored;
  EXPECT_LT(off_y.share(), 0.15) << off_y.known << " of " << off_y.scored;
}

// A frame whose content moved 8 pixels (the world shifted half a tile under the overlays) fails
// at the game's phase.
TEST(TileStructure, AFrameShiftedHalfATileFails) {
  const std::vector<game::PixelRect> overlays = game::screen_overlays(kSide, kSide);
  game::Game game = make_game(1000002);
  PhaseScores shifted, unshifted;
  for (game::Action action : player_actions(77, 120)) {
    game.step(action);
    const std::vector<uint8_t>& f = game.frame();
    std::vector<uint8_t> moved(f.size());
    for (int y = 0; y < kSide; ++y) {
      for (int x = 0; x < kSide; ++x) {
        const int sx = (x + kStructurePatch) % kSide;
        std::memcpy(&moved[(static_cast<size_t>(y) * kSide + x) * 4],
                    &f[(static_cast<size_t>(y) * kSide + sx) * 4], 4);
      }
    }
    const GridPhase phase = game_grid_phase(game);
    const StructureScore a = score_structure(terrain_groups(moved.data(), kSide, kSide), kSide,
                                             kSide, phase, overlays, survey());
    const StructureScore b = score_structure(terrain_groups(f.data(), kSide, kSide), kSide, kSide,
                                             phase, overlays, survey());
    shifted.scored += a.scored, shifted.known += a.known;
    unshifted.scored += b.scored, unshifted.known += b.known;
  }
  EXPECT_GT(shifted.scored, 100);
  EXPECT_LT(shifted.share(), 0.10);
  EXPECT_EQ(unshifted.share(), 1.0);
}

// Note [Own walls] on the game's own frames: read at the game's grid phase, the frame before a
// step says whether the game takes it, every time; read as the metric reads a model's frame (all
// four phases, the drawn phase where they disagree), too.
TEST(OwnWalls, TheGamesFramesSayWhetherItsStepsAreTaken) {
  const std::vector<game::PixelRect> overlays = game::screen_overlays(kSide, kSide);
  int steps = 0, blocked = 0, by_drawn_phase = 0;
  for (uint64_t seed = 1000000; seed < 1000012; ++seed) {
    game::Game game = make_game(seed);
    for (game::Action action : player_actions(seed ^ 0x3C, 300)) {
      if (action == game::Action::kNone) {
        game.step(action);
        continue;
      }
      const std::vector<G> groups = terrain_groups(game.frame().data(), kSide, kSide);
      const GridPhase phase = game_grid_phase(game);
      const int x = game.player_x(), y = game.player_y();
      game.step(action);
      const bool stopped = game.player_x() == x && game.player_y() == y;
      ++steps;
      blocked += stopped;
      ASSERT_EQ(step_blocked_at(groups, kSide, kSide, phase, action, overlays), stopped)
          << "seed " << seed << ", step " << steps << ", " << game::action_name(action);
      const GridPhase drawn = best_structure(groups, kSide, kSide, overlays, survey()).phase;
      const StepReading reading = read_step(groups, kSide, kSide, action, overlays, drawn);
      by_drawn_phase += reading.by_drawn_phase;
      ASSERT_EQ(reading.blocked, stopped) << "seed " << seed << ", step " << steps;
    }
  }
  EXPECT_GT(blocked, 50);
  EXPECT_GT(by_drawn_phase, 100);  // the phases often disagree next to walls
}

// A drawn lake stops the player whatever grid it is drawn on, one out of reach does not, and one
// half a tile off reads as the frame's grid says.
TEST(OwnWalls, ALakeInTheWayBlocksAtEveryPhaseAndOneFarOffDoesNot) {
  const std::vector<game::PixelRect> overlays = game::screen_overlays(kSide, kSide);
  std::vector<G> groups(static_cast<size_t>(kSide) * kSide, G::kGrass);
  const auto paint = [&](int x0, int y0, int side, G group) {
    for (int y = y0; y < y0 + side; ++y) {
      for (int x = x0; x < x0 + side; ++x) groups[static_cast<size_t>(y) * kSide + x] = group;
    }
  };
  const auto read = [&](game::Action move, GridPhase drawn) {
    return read_step(groups, kSide, kSide, move, overlays, drawn);
  };
  const GridPhase at0{0, 0}, at8{kStructurePatch, 0};
  for (game::Action move :
       {game::Action::kUp, game::Action::kDown, game::Action::kLeft, game::Action::kRight}) {
    EXPECT_FALSE(read(move, at0).blocked);
    EXPECT_FALSE(read(move, at0).by_drawn_phase);
  }
  // Water from 8 pixels right of the sprite on: a tile away on the grid at x = 0, next to the
  // player on the grid at x = 8.
  paint(80, 48, 32, G::kWater);
  EXPECT_FALSE(read(game::Action::kRight, at0).blocked);
  EXPECT_TRUE(read(game::Action::kRight, at0).by_drawn_phase);
  EXPECT_TRUE(read(game::Action::kRight, at8).blocked);
  EXPECT_FALSE(read(game::Action::kLeft, at8).blocked);
  // Right against the sprite: blocked at every phase.
  paint(72, 48, 32, G::kWater);
  EXPECT_TRUE(read(game::Action::kRight, at0).blocked);
  EXPECT_FALSE(read(game::Action::kRight, at0).by_drawn_phase);
  // A wall far above the player stops nothing; one in the step's way does.
  paint(0, 0, kSide, G::kGrass);
  paint(56, 0, 16, G::kWall);
  EXPECT_FALSE(read(game::Action::kUp, at8).blocked);
  EXPECT_FALSE(read(game::Action::kUp, at8).by_drawn_phase);
  paint(56, 40, 16, G::kWall);
  EXPECT_TRUE(read(game::Action::kUp, at0).blocked);
  EXPECT_FALSE(read(game::Action::kUp, at0).by_drawn_phase);
  EXPECT_THROW(read(game::Action::kNone, at0), std::invalid_argument);
  EXPECT_THROW(read_step(std::vector<G>(10), kSide, kSide, game::Action::kUp, overlays, at0),
               std::invalid_argument);
}

TEST(OverlayGlyphs, TheGamesSpriteIsAPoseAndAPaintedOneIsNot) {
  game::Game game = make_game(1000001);
  const game::PixelRect sprite = game.player_rect();
  for (game::Action action : player_actions(5, 80)) {
    game.step(action);
    const SpriteMatch match = match_player_sprite(game.frame().data(), kSide, kSide, sprite);
    EXPECT_TRUE(match.pose);
    EXPECT_EQ(match.pixel_share, 1.0);
  }
  std::vector<uint8_t> frame = game.frame();
  // One opaque pixel (row 9, column 6: shirt or backpack in every pose) turned to grass.
  const uint32_t grass = p::kGrass;
  std::memcpy(&frame[(static_cast<size_t>(sprite.y + 9) * kSide + sprite.x + 6) * 4], &grass, 4);
  const SpriteMatch broken = match_player_sprite(frame.data(), kSide, kSide, sprite);
  EXPECT_FALSE(broken.pose);
  EXPECT_GT(broken.pixel_share, 0.95);
  EXPECT_LT(broken.pixel_share, 1.0);
}

TEST(OverlayGlyphs, HudCountsReadAsDigitsAndBrokenCellsDoNot) {
  std::vector<uint8_t> frame(static_cast<size_t>(kSide) * kSide * 4, 0);
  const game::Canvas canvas{frame.data(), kSide, kSide};
  for (int count : {0, 7, 10, 42, 305, 999}) {
    game::draw_hud(canvas, count);
    EXPECT_TRUE(hud_digits_readable(frame.data(), kSide, kSide)) << count;
  }
  game::draw_hud(canvas, 42);
  const game::HudLayout layout = game::hud_layout();
  // A lit pixel of the 4 dimmed: not a glyph.
  std::vector<uint8_t> dimmed = frame;
  const uint32_t back = p::kHudBack;
  std::memcpy(&dimmed[(static_cast<size_t>(layout.digits_y) * kSide + layout.digits_x) * 4], &back,
              4);
  EXPECT_FALSE(hud_digits_readable(dimmed.data(), kSide, kSide));
  // Grass painted over the HUD: no digits at all.
  std::vector<uint8_t> grass_hud = frame;
  const uint32_t grass = p::kGrass;
  for (int y = 0; y < 20; ++y) {
    for (int x = 0; x < 40; ++x) std::memcpy(&grass_hud[(y * kSide + x) * 4], &grass, 4);
  }
  EXPECT_FALSE(hud_digits_readable(grass_hud.data(), kSide, kSide));
  // A blank HUD (no digit) is not a count either.
  canvas.fill(layout.box.x + 1, layout.box.y + 1, layout.box.width - 2, layout.box.height - 2,
              p::kHudBack);
  EXPECT_FALSE(hud_digits_readable(frame.data(), kSide, kSide));
  // Too small a frame for the HUD box.
  EXPECT_FALSE(hud_digits_readable(frame.data(), 32, 32));
}

}  // namespace
}  // namespace wc::eval
