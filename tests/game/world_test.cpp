// The world generator: a pure function of (seed, tile), varied terrain, an open spawn.
#include "engine/game/world.h"

#include <gtest/gtest.h>

#include <map>
#include <vector>

namespace wc::game {
namespace {

TEST(World, SameSeedAndTileAlwaysGiveTheSameTile) {
  // Generate a region in two different orders (and from two World objects): no hidden state.
  const World a(77), b(77);
  std::vector<Tile> forward, backward;
  for (int y = -40; y < 40; ++y) {
    for (int x = -40; x < 40; ++x) forward.push_back(a.tile(x, y));
  }
  for (int y = 39; y >= -40; --y) {
    for (int x = 39; x >= -40; --x) backward.push_back(b.tile(x, y));
  }
  std::reverse(backward.begin(), backward.end());
  EXPECT_EQ(forward, backward);
}

TEST(World, DifferentSeedsGiveDifferentWorlds) {
  int differing = 0, total = 0;
  for (int y = -50; y < 50; ++y) {
    for (int x = -50; x < 50; ++x) {
      differing += generate_tile(1, x, y) != generate_tile(2, x, y);
      ++total;
    }
  }
  EXPECT_GT(differing, total / 5);
}

TEST(World, HasEveryKindOfTileInSensibleAmounts) {
  std::map<Tile, int> counts;
  constexpr int kSide = 200;
  for (int y = -kSide / 2; y < kSide / 2; ++y) {
    for (int x = -kSide / 2; x < kSide / 2; ++x) ++counts[generate_tile(3, x, y)];
  }
  const double total = kSide * kSide;
  EXPECT_GT(counts[Tile::kGrass] / total, 0.35);
  for (const Tile tile : {Tile::kSand, Tile::kWater, Tile::kWall, Tile::kTree, Tile::kCrystal}) {
    EXPECT_GT(counts[tile] / total, 0.005) << tile_name(tile);
    EXPECT_LT(counts[tile] / total, 0.35) << tile_name(tile);
  }
}

TEST(World, SpawnAndItsNeighbourhoodAreWalkable) {
  for (uint64_t seed = 0; seed < 60; ++seed) {
    const World world(seed);
    const TileCoord spawn = world.spawn();
    for (int dy = -1; dy <= 1; ++dy) {
      for (int dx = -1; dx <= 1; ++dx) {
        const Tile tile = world.tile(spawn.x + dx, spawn.y + dy);
        EXPECT_FALSE(blocks_movement(tile)) << "seed " << seed;
        EXPECT_NE(tile, Tile::kCrystal) << "seed " << seed;
      }
    }
    EXPECT_EQ(World(seed).spawn(), spawn);  // deterministic
  }
}

TEST(World, BlockingRulesPerTile) {
  EXPECT_TRUE(blocks_movement(Tile::kWater));
  EXPECT_TRUE(blocks_movement(Tile::kWall));
  EXPECT_TRUE(blocks_movement(Tile::kTree));
  EXPECT_FALSE(blocks_movement(Tile::kGrass));
  EXPECT_FALSE(blocks_movement(Tile::kSand));
  EXPECT_FALSE(blocks_movement(Tile::kCrystal));
}

TEST(World, IsEndlessInEveryDirection) {
  // Far from the origin (and across the sign change of coordinates) terrain is still varied.
  for (const auto& [ox, oy] : {std::pair{-1000000, 5}, {3, -2000000}, {50000000, 50000000}}) {
    std::map<Tile, int> counts;
    for (int y = 0; y < 60; ++y) {
      for (int x = 0; x < 60; ++x) ++counts[generate_tile(8, ox + x, oy + y)];
    }
    EXPECT_GE(counts.size(), 3u) << ox << "," << oy;
  }
}

}  // namespace
}  // namespace wc::game
