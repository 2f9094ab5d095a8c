// The heads-up display: a small box in the top-left corner with a crystal icon and the count of
// crystals collected, drawn with the built-in digit font.
#pragma once

#include "engine/game/canvas.h"
#include "engine/game/game.h"

namespace wc::game {

inline constexpr int kHudDigitScale = 2;  // each font pixel is drawn 2x2
inline constexpr int kHudMaxDigits = 3;   // counts above 999 show as 999

struct HudLayout {
  PixelRect box;
  int icon_x = 0, icon_y = 0;
  int digits_x = 0, digits_y = 0;
};

// A fixed layout, so the box does not jump when the count gains a digit.
HudLayout hud_layout();
void draw_hud(const Canvas& canvas, int crystals);

}  // namespace wc::game
