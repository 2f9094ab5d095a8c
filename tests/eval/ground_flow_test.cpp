// Note [Ground flow]: the game's own steps keep their ground and invent what its edge shows;
// ground that fades is counted as lost; still steps and overlays count nothing.
#include "engine/eval/ground_flow.h"

#include <gtest/gtest.h>

#include <random>

#include "engine/core/error.h"
#include "engine/eval/phase_correlation.h"

namespace wc::eval {
namespace {

constexpr int kSide = 128;

std::vector<TerrainGroup> groups_of(const game::Game& g) {
  return terrain_groups(g.frame().data(), kSide, kSide);
}

TEST(GroundFlow, TheGamesStepsKeepTheirGroundAndInventTheirEdge) {
  std::mt19937 random(std::random_device{}());
  game::Game g({kSide, kSide, random() % 100000, true});
  const std::vector<game::PixelRect> overlays = game::screen_overlays(kSide, kSide);
  const game::Action keys[] = {game::Action::kRight, game::Action::kDown, game::Action::kLeft,
                               game::Action::kUp};
  GroundFlow total;
  int moves = 0;
  for (int i = 0; i < 80; ++i) {
    const game::Action key = keys[(i / 10) % 4];
    const std::vector<TerrainGroup> before = groups_of(g);
    const int x = g.camera_x(), y = g.camera_y();
    g.step(key);
    if (g.camera_x() == x && g.camera_y() == y) continue;
    ++moves;
    const Shift content = content_shift_of(key, game::kPlayerSpeed);
    const std::vector<TerrainGroup> after = groups_of(g);
    const GroundFlow flow =
        ground_flow(before, after, kSide, kSide, content.dx, content.dy, overlays);
    // The strip is the camera step's edge, counted independently here.
    int64_t strip = 0, strip_non_grass = 0;
    for (int py = 0; py < kSide; ++py) {
      for (int px = 0; px < kSide; ++px) {
        const bool edge =
            (content.dx < 0 && px >= kSide + content.dx) || (content.dx > 0 && px < content.dx) ||
            (content.dy < 0 && py >= kSide + content.dy) || (content.dy > 0 && py < content.dy);
        bool overlay = false;
        for (const game::PixelRect& r : overlays) {
          overlay =
              overlay || (px >= r.x && px < r.x + r.width && py >= r.y && py < r.y + r.height);
        }
        if (!edge || overlay) continue;
        ++strip;
        strip_non_grass += after[static_cast<size_t>(py) * kSide + px] != TerrainGroup::kGrass;
      }
    }
    EXPECT_EQ(flow.strip_pixels, strip) << "step " << i;
    EXPECT_EQ(flow.strip_non_grass, strip_non_grass) << "step " << i;
    total.add(flow);
  }
  ASSERT_GT(moves, 20);
  // Only picked crystals change group in the game's carried view.
  ASSERT_GT(total.carried_non_grass, 0);
  EXPECT_GT(total.kept_share(), 0.99);
}

TEST(GroundFlow, GroundThatFadesIntoGrassIsLost) {
  const int w = 16, h = 8;
  std::vector<TerrainGroup> before(w * h, TerrainGroup::kWater), after(w * h, TerrainGroup::kGrass);
  // Content moved left by 4 (the camera right): the right 4 columns are new; keep one carried
  // column's water.
  for (int y = 0; y < h; ++y) after[static_cast<size_t>(y) * w] = TerrainGroup::kWater;
  for (int y = 0; y < h; ++y) after[static_cast<size_t>(y) * w + 15] = TerrainGroup::kSand;
  const GroundFlow flow = ground_flow(before, after, w, h, -4, 0, {});
  EXPECT_EQ(flow.strip_pixels, 4 * h);
  EXPECT_EQ(flow.strip_non_grass, h);
  EXPECT_DOUBLE_EQ(flow.invented_share(), 0.25);
  EXPECT_EQ(flow.carried_non_grass, 12 * h);
  EXPECT_EQ(flow.carried_kept, h);
  EXPECT_DOUBLE_EQ(flow.kept_share(), 1.0 / 12.0);
  // An overlay's pixels count nowhere.
  const GroundFlow covered = ground_flow(before, after, w, h, -4, 0, {{0, 0, w, h}});
  EXPECT_EQ(covered.strip_pixels + covered.carried_non_grass, 0);
}

TEST(GroundFlow, AStillStepCountsNothingAndMismatchedFramesAreRefused) {
  const std::vector<TerrainGroup> frame(64, TerrainGroup::kTree);
  const GroundFlow still = ground_flow(frame, frame, 8, 8, 0, 0, {});
  EXPECT_EQ(still.strip_pixels + still.carried_non_grass, 0);
  EXPECT_DOUBLE_EQ(still.invented_share(), -1.0);
  EXPECT_DOUBLE_EQ(still.kept_share(), -1.0);
  EXPECT_THROW(ground_flow(frame, std::vector<TerrainGroup>(63), 8, 8, 1, 0, {}), Error);
}

}  // namespace
}  // namespace wc::eval
