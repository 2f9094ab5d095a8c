// A tiny built-in bitmap font (3x5 digits) for the HUD, so the game needs no font files.
#pragma once

#include <cstdint>

namespace wc::game {

inline constexpr int kGlyphWidth = 3;
inline constexpr int kGlyphHeight = 5;

// Whether pixel (x, y) of digit `digit` (0..9) is lit; x < kGlyphWidth, y < kGlyphHeight.
bool digit_pixel(int digit, int x, int y);

}  // namespace wc::game
