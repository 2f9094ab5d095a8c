// Tile textures and frame composition. Textures are flat colours with a few hashed detail
// pixels (tufts, dots, chips) so motion is visible without high-frequency noise everywhere.
#include "engine/game/render.h"

#include <algorithm>

#include "engine/game/canvas.h"
#include "engine/game/hash.h"
#include "engine/game/hud.h"
#include "engine/game/palette.h"
#include "engine/game/sprites.h"

namespace wc::game {
namespace {

constexpr uint32_t kSaltTexture = 100;
constexpr int kTexels = kTileSize * kTileSize;

// A detail position in [1, 12] from 4 bits of the hash, keeping 3-pixel marks inside the tile.
int detail_coord(uint64_t h, int shift) {
  return 1 + static_cast<int>((h >> shift) & 15) % 12;
}

void paint_grass(uint64_t h, uint32_t* texture) {
  std::fill(texture, texture + kTexels, palette::kGrass);
  for (int i = 0; i < 3; ++i) {
    const int x = detail_coord(h, i * 8), y = detail_coord(h, i * 8 + 4);
    texture[y * kTileSize + x] = palette::kGrassTuft;
    texture[(y + 1) * kTileSize + x + 1] = palette::kGrassTuft;
    texture[y * kTileSize + x + 2] = palette::kGrassTuft;
  }
}

void paint_sand(uint64_t h, uint32_t* texture) {
  std::fill(texture, texture + kTexels, palette::kSand);
  for (int i = 0; i < 4; ++i) {
    texture[detail_coord(h, i * 8 + 4) * kTileSize + detail_coord(h, i * 8)] = palette::kSandDot;
  }
}

// Bricks in two offset courses of 7 rows, so neighbouring wall tiles join seamlessly.
void paint_wall(uint64_t h, uint32_t* texture) {
  for (int y = 0; y < kTileSize; ++y) {
    for (int x = 0; x < kTileSize; ++x) {
      const bool course_joint = (y % 8) == 7;
      const bool head_joint = y < 8 ? (x % 8) == 7 : (x % 8) == 3;
      texture[y * kTileSize + x] =
          course_joint || head_joint ? palette::kWallMortar : palette::kWall;
    }
  }
  for (int i = 0; i < 2; ++i) {
    const int x = detail_coord(h, 32 + i * 8), y = detail_coord(h, 36 + i * 8);
    if (texture[y * kTileSize + x] == palette::kWall)
      texture[y * kTileSize + x] = palette::kWallChip;
  }
}

// Short wave crests drifting right with time; their phase depends on world x (continuous across
// tiles) and on the tile row (so rows of water do not move in lockstep stripes).
void paint_water(int32_t tile_x, int32_t tile_y, uint64_t frame_index, uint32_t* texture) {
  std::fill(texture, texture + kTexels, palette::kWater);
  const int drift = static_cast<int>((frame_index / kWaveFramesPerPixel) % kTileSize);
  for (int crest = 0; crest < 2; ++crest) {
    const int row = 4 + crest * 8;
    const int offset = crest * 8 + tile_y * 5 - drift;
    for (int x = 0; x < kTileSize; ++x) {
      const int m = (tile_x * kTileSize + x + offset) & (kTileSize - 1);
      if (m >= 1 && m <= 4) texture[row * kTileSize + x] = palette::kWaterWave;
      if (m == 0 || m == 5) texture[(row + 1) * kTileSize + x] = palette::kWaterWave;
    }
  }
}

void overlay(const Sprite& sprite, uint32_t* texture) {
  for (int i = 0; i < kTexels; ++i) {
    if (is_opaque(sprite[i])) texture[i] = sprite[i];
  }
}

}  // namespace

void paint_tile(Tile tile, uint64_t seed, int32_t x, int32_t y, uint64_t frame_index,
                uint32_t* texture) {
  const uint64_t h = tile_hash(seed, x, y, kSaltTexture);
  switch (tile) {
    case Tile::kGrass:
      paint_grass(h, texture);
      break;
    case Tile::kSand:
      paint_sand(h, texture);
      break;
    case Tile::kWater:
      paint_water(x, y, frame_index, texture);
      break;
    case Tile::kWall:
      paint_wall(h, texture);
      break;
    case Tile::kTree:
      paint_grass(h, texture);
      overlay(tree_sprite(), texture);
      break;
    case Tile::kCrystal:
      paint_grass(h, texture);
      overlay(crystal_sprite(), texture);
      break;
  }
}

void render_ground(const Game& game, int32_t x0, int32_t y0, int cols, int rows, uint8_t* rgba) {
  const Canvas canvas{rgba, cols * kTileSize, rows * kTileSize};
  uint32_t texture[kTexels];
  for (int r = 0; r < rows; ++r) {
    for (int c = 0; c < cols; ++c) {
      paint_tile(game.tile_at(x0 + c, y0 + r), game.seed(), x0 + c, y0 + r, game.frame_index(),
                 texture);
      canvas.blit(texture, kTileSize, kTileSize, c * kTileSize, r * kTileSize);
    }
  }
}

void render_frame(const Game& game, uint8_t* rgba) {
  const Canvas canvas{rgba, game.width(), game.height()};
  const int camera_x = game.camera_x(), camera_y = game.camera_y();
  const int first_x = floor_div(camera_x, kTileSize);
  const int last_x = floor_div(camera_x + game.width() - 1, kTileSize);
  const int first_y = floor_div(camera_y, kTileSize);
  const int last_y = floor_div(camera_y + game.height() - 1, kTileSize);
  uint32_t texture[kTexels];
  for (int ty = first_y; ty <= last_y; ++ty) {
    for (int tx = first_x; tx <= last_x; ++tx) {
      paint_tile(game.tile_at(tx, ty), game.seed(), tx, ty, game.frame_index(), texture);
      canvas.blit(texture, kTileSize, kTileSize, tx * kTileSize - camera_x,
                  ty * kTileSize - camera_y);
    }
  }

  const PixelRect player = game.player_rect();
  const Sprite& sprite = player_sprite(game.facing(), game.walk_frame());
  for (int y = 0; y < kSpriteSize; ++y) {
    for (int x = 0; x < kSpriteSize; ++x) {
      const uint32_t pixel = sprite[y * kSpriteSize + x];
      if (is_opaque(pixel)) canvas.put(player.x + x, player.y + y, pixel);
    }
  }

  if (game.hud_rect().width > 0) draw_hud(canvas, game.crystals_collected());
}

}  // namespace wc::game
