// Drawing a game state into an RGBA8 frame: the visible tiles, the centred player, the HUD.
#pragma once

#include <cstdint>

#include "engine/game/game.h"

namespace wc::game {

inline constexpr int kWaveFramesPerPixel = 4;  // waves drift one pixel every 4 frames

// Renders `game` as seen now into `rgba` (game.width() * game.height() * 4 bytes).
void render_frame(const Game& game, uint8_t* rgba);

// The 16x16 texture of tile (x, y) of kind `tile` at `frame_index` (only water depends on it).
void paint_tile(Tile tile, uint64_t seed, int32_t x, int32_t y, uint64_t frame_index,
                uint32_t* texture);

// The ground of `game` as it is now, with no sprite or HUD over it: the `cols` x `rows` tiles
// from tile (x0, y0), whole, into `rgba` (cols·16 x rows·16 pixels, 4 bytes each).
void render_ground(const Game& game, int32_t x0, int32_t y0, int cols, int rows, uint8_t* rgba);

}  // namespace wc::game
