// Drawing the HUD box, icon and counter.
#include "engine/game/hud.h"

#include <algorithm>
#include <string>

#include "engine/game/font.h"
#include "engine/game/palette.h"
#include "engine/game/sprites.h"

namespace wc::game {

HudLayout hud_layout() {
  HudLayout layout;
  layout.box = {2, 2, 36, 14};
  layout.icon_x = 5;
  layout.icon_y = 5;
  layout.digits_x = 12;
  layout.digits_y = 4;
  return layout;
}

void draw_hud(const Canvas& canvas, int crystals) {
  const HudLayout layout = hud_layout();
  const PixelRect& box = layout.box;
  canvas.fill(box.x, box.y, box.width, box.height, palette::kHudBorder);
  canvas.fill(box.x + 1, box.y + 1, box.width - 2, box.height - 2, palette::kHudBack);

  const auto& icon = hud_crystal_icon();
  for (int y = 0; y < kHudIconHeight; ++y) {
    for (int x = 0; x < kHudIconWidth; ++x) {
      const uint32_t pixel = icon[y * kHudIconWidth + x];
      if (is_opaque(pixel)) canvas.put(layout.icon_x + x, layout.icon_y + y, pixel);
    }
  }

  const std::string digits = std::to_string(std::clamp(crystals, 0, 999));
  for (size_t i = 0; i < digits.size(); ++i) {
    const int digit = digits[i] - '0';
    const int x0 = layout.digits_x + static_cast<int>(i) * (kGlyphWidth + 1) * kHudDigitScale;
    for (int gy = 0; gy < kGlyphHeight; ++gy) {
      for (int gx = 0; gx < kGlyphWidth; ++gx) {
        if (!digit_pixel(digit, gx, gy)) continue;
        canvas.fill(x0 + gx * kHudDigitScale, layout.digits_y + gy * kHudDigitScale, kHudDigitScale,
                    kHudDigitScale, palette::kHudText);
      }
    }
  }
}

}  // namespace wc::game
