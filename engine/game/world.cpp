// Terrain generation (value noise for lakes and forests, hashed ruins and crystals) and the
// deterministic choice of the spawn tile.
#include "engine/game/world.h"

#include <cstdlib>
#include <unordered_set>
#include <vector>

#include "engine/game/hash.h"

namespace wc::game {
namespace {

// Salts keep the independent uses of the hash uncorrelated.
constexpr uint32_t kSaltElevationCoarse = 1;
constexpr uint32_t kSaltElevationFine = 2;
constexpr uint32_t kSaltForest = 3;
constexpr uint32_t kSaltObject = 4;
constexpr uint32_t kSaltRuin = 5;

constexpr int kWaterLevel = 92;  // elevation (0..255) below which a tile is water
constexpr int kSandLevel = 106;  // ... and below which it is beach
constexpr int kForestLevel = 165;
constexpr int kRuinChunk = 8;  // ruins: at most one wall piece per 8x8-tile chunk

// Bilinear value noise on a lattice of `cell` tiles: smooth enough that lakes and forests are
// blobs many tiles wide, which keeps frames readable.
int value_noise(uint64_t seed, int32_t x, int32_t y, int cell, uint32_t salt) {
  const int cx = floor_div(x, cell), cy = floor_div(y, cell);
  const int fx = x - cx * cell, fy = y - cy * cell;
  const auto corner = [&](int dx, int dy) {
    return static_cast<int>(tile_hash(seed, cx + dx, cy + dy, salt) & 0xFF);
  };
  const int top = corner(0, 0) * (cell - fx) + corner(1, 0) * fx;
  const int bottom = corner(0, 1) * (cell - fx) + corner(1, 1) * fx;
  return (top * (cell - fy) + bottom * fy) / (cell * cell);
}

int elevation(uint64_t seed, int32_t x, int32_t y) {
  return (2 * value_noise(seed, x, y, 12, kSaltElevationCoarse) +
          value_noise(seed, x, y, 4, kSaltElevationFine)) /
         3;
}

// A ruin is a wall segment of 3..5 tiles, sometimes with a 2-tile arm at its start (an L),
// kept one tile inside its chunk so ruins of neighbouring chunks never join into enclosures.
bool is_ruin_wall(uint64_t seed, int32_t x, int32_t y) {
  const int cx = floor_div(x, kRuinChunk), cy = floor_div(y, kRuinChunk);
  const uint64_t h = tile_hash(seed, cx, cy, kSaltRuin);
  if (h % 100 >= 45) return false;
  const int lx = x - cx * kRuinChunk, ly = y - cy * kRuinChunk;
  const bool horizontal = (h >> 8) & 1;
  const int length = 3 + static_cast<int>((h >> 9) % 3);
  const int start = 1 + static_cast<int>((h >> 12) % (kRuinChunk - 2 - length + 1));
  const int across = 1 + static_cast<int>((h >> 16) % (kRuinChunk - 2));
  const bool arm = (h >> 20) & 1;
  const int along_pos = horizontal ? lx : ly;
  const int across_pos = horizontal ? ly : lx;
  if (across_pos == across && along_pos >= start && along_pos < start + length) return true;
  if (arm && along_pos == start) {
    // The arm points towards the chunk's middle so it stays inside the margin.
    const int direction = across < kRuinChunk / 2 ? 1 : -1;
    return across_pos == across + direction || across_pos == across + 2 * direction;
  }
  return false;
}

bool open_ground(uint64_t seed, int32_t x, int32_t y) {
  const Tile tile = generate_tile(seed, x, y);
  return !blocks_movement(tile) && tile != Tile::kCrystal;
}

// True when a flood fill from (x, y) over walkable tiles reaches `wanted` tiles.
bool opens_onto_region(uint64_t seed, TileCoord start, size_t wanted) {
  const auto key = [](TileCoord c) {
    return (static_cast<uint64_t>(static_cast<uint32_t>(c.x)) << 32) | static_cast<uint32_t>(c.y);
  };
  std::unordered_set<uint64_t> seen{key(start)};
  std::vector<TileCoord> frontier{start};
  while (!frontier.empty() && seen.size() < wanted) {
    const TileCoord c = frontier.back();
    frontier.pop_back();
    for (const TileCoord n : {TileCoord{c.x + 1, c.y}, TileCoord{c.x - 1, c.y},
                              TileCoord{c.x, c.y + 1}, TileCoord{c.x, c.y - 1}}) {
      if (blocks_movement(generate_tile(seed, n.x, n.y)) || !seen.insert(key(n)).second) continue;
      frontier.push_back(n);
    }
  }
  return seen.size() >= wanted;
}

}  // namespace

const char* tile_name(Tile tile) {
  switch (tile) {
    case Tile::kGrass:
      return "grass";
    case Tile::kSand:
      return "sand";
    case Tile::kWater:
      return "water";
    case Tile::kWall:
      return "wall";
    case Tile::kTree:
      return "tree";
    case Tile::kCrystal:
      return "crystal";
  }
  return "grass";
}

bool blocks_movement(Tile tile) {
  return tile == Tile::kWater || tile == Tile::kWall || tile == Tile::kTree;
}

Tile generate_tile(uint64_t seed, int32_t x, int32_t y) {
  const int e = elevation(seed, x, y);
  if (e < kWaterLevel) return Tile::kWater;
  if (is_ruin_wall(seed, x, y)) return Tile::kWall;
  if (e < kSandLevel) return Tile::kSand;
  const uint64_t h = tile_hash(seed, x, y, kSaltObject);
  const bool forest = value_noise(seed, x, y, 8, kSaltForest) >= kForestLevel;
  if (static_cast<int>(h % 100) < (forest ? 45 : 4)) return Tile::kTree;
  if ((h >> 16) % 1000 < 22) return Tile::kCrystal;
  return Tile::kGrass;
}

World::World(uint64_t seed) : seed_(seed) {
  // Walk square rings outwards from the origin; the first tile that qualifies is the spawn.
  constexpr int kSearchRadius = 48;
  constexpr size_t kOpenRegion = 256;
  for (int r = 0; r <= kSearchRadius; ++r) {
    for (int y = -r; y <= r; ++y) {
      for (int x = -r; x <= r; ++x) {
        if (std::abs(x) != r && std::abs(y) != r) continue;
        bool open = true;
        for (int dy = -1; dy <= 1 && open; ++dy) {
          for (int dx = -1; dx <= 1 && open; ++dx) open = open_ground(seed, x + dx, y + dy);
        }
        if (open && opens_onto_region(seed, {x, y}, kOpenRegion)) {
          spawn_ = {x, y};
          return;
        }
      }
    }
  }
  // Practically unreachable (a 97x97-tile area with no open spot), but the game must still
  // start: clear a patch at the origin.
  spawn_ = {0, 0};
  spawn_cleared_ = true;
}

Tile World::tile(int32_t x, int32_t y) const {
  if (spawn_cleared_ && std::abs(x - spawn_.x) <= 1 && std::abs(y - spawn_.y) <= 1) {
    return Tile::kGrass;
  }
  return generate_tile(seed_, x, y);
}

}  // namespace wc::game
