// Note [Structure flow]: the game's own steps make no broken block; a block broken where its
// first half came in, one broken by its second half, one carried broken and one broken in the
// carried view are each told apart.
#include "engine/eval/structure_flow.h"

#include <gtest/gtest.h>

#include <random>

#include "engine/core/error.h"
#include "engine/eval/phase_correlation.h"
#include "engine/eval/player_actions.h"

namespace wc::eval {
namespace {

using G = TerrainGroup;

TEST(StructureFlow, TheGamesOwnStepsMakeNoBrokenBlock) {
  constexpr int kSide = 128;
  const TileBlockSurvey survey = survey_tile_blocks(kSide, kSide);
  const std::vector<game::PixelRect> overlays = game::screen_overlays(kSide, kSide);
  std::mt19937 random(std::random_device{}());
  const uint64_t first_seed = 5000000 + random() % 100000;
  StructureFlow total;
  for (uint64_t seed = first_seed; seed < first_seed + 4; ++seed) {
    game::Game g({kSide, kSide, seed, true});
    for (game::Action key : player_actions(seed, 300)) {
      const std::vector<G> before = terrain_groups(g.frame().data(), kSide, kSide);
      const int x = g.camera_x(), y = g.camera_y();
      g.step(key);
      const bool moved = g.camera_x() != x || g.camera_y() != y;
      const Shift content = moved ? content_shift_of(key, game::kPlayerSpeed) : Shift{};
      total.add(structure_flow(before, terrain_groups(g.frame().data(), kSide, kSide), kSide, kSide,
                               content.dx, content.dy, game_grid_phase(g), overlays, survey));
    }
  }
  EXPECT_EQ(total.steps, 4 * 300);
  ASSERT_GT(total.edge_blocks, 50) << "seeds from " << first_seed;
  EXPECT_EQ(total.edge_known, total.edge_blocks) << "seeds from " << first_seed;
  EXPECT_EQ(total.carried_broken, 0) << "seeds from " << first_seed;
}

// A 32x32 view (2x2 tiles at phase (0, 0)) whose content moved 8 pixels left: its right 8
// columns are new, so the right column of tiles are edge blocks and the left column carried.
TEST(StructureFlow, EachBrokenBlockIsPlacedWhereItWasMade) {
  constexpr int kSide = 32;
  TileBlockSurvey survey;
  const auto plain = [](G g) { return BlockKey{1u << static_cast<int>(g)} * 0x01010101u; };
  survey.add({plain(G::kGrass), plain(G::kWater), plain(G::kSand)});
  std::vector<G> before(kSide * kSide, G::kGrass), after(kSide * kSide, G::kGrass);
  const auto paint = [&](std::vector<G>& frame, int x0, int y0, G g) {  // one 8x8 patch
    for (int y = y0; y < y0 + 8; ++y)
      for (int x = x0; x < x0 + 8; ++x) frame[static_cast<size_t>(y) * kSide + x] = g;
  };
  // Edge tile, top: water above sand in the carried half (no tile of the game), grass beside.
  paint(after, 16, 0, G::kWater);
  paint(after, 16, 8, G::kSand);
  // Edge tile, bottom: a whole half of water, then sand in the half that came in.
  paint(after, 16, 16, G::kWater);
  paint(after, 16, 24, G::kWater);
  paint(after, 24, 16, G::kSand);
  paint(after, 24, 24, G::kSand);
  // Carried tile, top: broken a step before too (its ground was at x + 8 then).
  paint(after, 0, 0, G::kWater);
  paint(before, 8, 0, G::kWater);
  // Carried tile, bottom: broken by this step; its ground was grass.
  paint(after, 8, 24, G::kSand);

  const StructureFlow flow = structure_flow(before, after, kSide, kSide, -8, 0, {0, 0}, {}, survey);
  EXPECT_EQ(flow.steps, 1);
  EXPECT_EQ(flow.edge_blocks, 2);
  EXPECT_EQ(flow.edge_known, 0);
  EXPECT_EQ(flow.edge_broken_first_half, 1);
  EXPECT_EQ(flow.carried_broken, 2);
  EXPECT_EQ(flow.carried_broken_made, 1);

  // The same frames as a still step: nothing is at the edge, and none of the four broken blocks
  // was there before, in place.
  const StructureFlow still = structure_flow(before, after, kSide, kSide, 0, 0, {0, 0}, {}, survey);
  EXPECT_EQ(still.edge_blocks, 0);
  EXPECT_EQ(still.carried_broken, 4);
  EXPECT_EQ(still.carried_broken_made, 4);
  // An overlay over the bottom-right tile leaves it unread.
  const StructureFlow hidden = structure_flow(before, after, kSide, kSide, -8, 0, {0, 0},
                                              {game::PixelRect{20, 20, 4, 4}}, survey);
  EXPECT_EQ(hidden.edge_blocks, 1);
  EXPECT_EQ(hidden.edge_broken_first_half, 1);
}

TEST(StructureFlow, ShiftsThatNoCameraStepMakesAreRefused) {
  const TileBlockSurvey survey;
  const std::vector<G> frame(32 * 32, G::kGrass);
  EXPECT_THROW(structure_flow(frame, frame, 32, 32, 4, 0, {0, 0}, {}, survey), Error);
  EXPECT_THROW(structure_flow(frame, frame, 32, 32, 8, 8, {0, 0}, {}, survey), Error);
  EXPECT_THROW(structure_flow(frame, std::vector<G>(10), 32, 32, 8, 0, {0, 0}, {}, survey), Error);
}

}  // namespace
}  // namespace wc::eval
