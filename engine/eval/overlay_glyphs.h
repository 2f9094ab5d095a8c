// The screen-fixed overlays read off a frame: is the player sprite one of the game's poses, are
// the HUD's digits digits (DESIGN.md §13, world content). Pixels are read as their nearest palette
// colour (terrain_groups.h), so a model's colour noise below the palette's spacing is forgiven
// and a wrong colour is not.
#pragma once

#include <cstdint>

#include "engine/game/game.h"

namespace wc::eval {

struct SpriteMatch {
  bool pose = false;         // every opaque pixel of some pose (facing x walk frame) matches
  double pixel_share = 0.0;  // the best pose's share of matching opaque pixels
};

// Compares the `sprite` rectangle of a width x height RGBA8 frame (Game::player_rect) with every
// pose of game::player_sprite, on the sprite's opaque pixels only (the ground shows around it).
SpriteMatch match_player_sprite(const uint8_t* rgba, int width, int height,
                                const game::PixelRect& sprite);

// Whether the HUD's digit cells read as a count the HUD draws: each of the game::kHudMaxDigits
// cells (game::hud_layout) is a font glyph in HUD text on the HUD's background, or blank, the
// glyphs first and a leading digit that is not 0 unless it is the only one. The frame must be
// at least as large as the HUD box.
bool hud_digits_readable(const uint8_t* rgba, int width, int height);

}  // namespace wc::eval
