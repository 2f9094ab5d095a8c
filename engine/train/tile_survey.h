// The reference game's tile book (`worldcast codebook --tiles`): its tile textures as ground
// entries, and what it draws fixed to the screen (the player's sprite, the HUD box and the HUD's
// digits) as layers taken from its own drawing, so that they compose its frames exactly.
#pragma once

#include <cstdint>
#include <vector>

#include "engine/model/tile_book.h"

namespace wc::train {

inline constexpr int kMaxTilesPerType = 4096;

// The layers, in drawing order: "sprite" (the player's poses), "hud" (the box without its count),
// then "digit0", "digit1", "digit2" (the count's places, left to right), whose image 0 is blank
// and image d + 1 the digit d.
inline constexpr int kTileLayers = 5;

struct TileSurvey {
  model::TileBook book;
  std::vector<int> ground_per_type;  // ground entries of each game::Tile, in the enum's order
};

// Up to `per_type` distinct textures of each tile type, fewer where the game draws fewer (water
// has 16), painted at places, world seeds and times drawn from `seed`; then the layers at their
// places in a `width` x `height` frame. Colours are numbered in order of first appearance. Throws
// wc::Error naming --per-type or --frame for values the book cannot hold.
TileSurvey survey_tiles(int width, int height, int per_type, uint64_t seed);
model::TileBook survey_tile_book(int width, int height, int per_type, uint64_t seed);

}  // namespace wc::train
