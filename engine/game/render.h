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

}  // namespace wc::game
