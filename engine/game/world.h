// The endless tile world: terrain is a pure function of (seed, tile x, tile y), so any region
// can be generated on demand and is the same every time it is revisited.
#pragma once

#include <cstdint>

namespace wc::game {

inline constexpr int kTileSize = 16;  // pixels per tile side

enum class Tile : uint8_t { kGrass, kSand, kWater, kWall, kTree, kCrystal };

struct TileCoord {
  int32_t x = 0;
  int32_t y = 0;
  friend bool operator==(TileCoord a, TileCoord b) { return a.x == b.x && a.y == b.y; }
  friend bool operator!=(TileCoord a, TileCoord b) { return !(a == b); }
};

const char* tile_name(Tile tile);
// Water, walls and trees stop the player; grass, sand and crystals do not.
bool blocks_movement(Tile tile);

// The tile as generated, before the spawn clearing and before any crystal is collected.
Tile generate_tile(uint64_t seed, int32_t x, int32_t y);

// One seed's world: the generator plus a deterministic spawn point whose surroundings are open.
class World {
 public:
  explicit World(uint64_t seed);

  uint64_t seed() const { return seed_; }
  // A walkable, crystal-free tile whose 3x3 neighbourhood is walkable and which opens onto a
  // sizeable walkable region (so the player never starts boxed in on a tiny island).
  TileCoord spawn() const { return spawn_; }
  // The generated tile, with the spawn neighbourhood forced to grass when no open spawn was
  // found nearby and one had to be cleared.
  Tile tile(int32_t x, int32_t y) const;

 private:
  uint64_t seed_;
  TileCoord spawn_;
  bool spawn_cleared_ = false;
};

}  // namespace wc::game
