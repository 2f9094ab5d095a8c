// See overlay_glyphs.h.
#include "engine/eval/overlay_glyphs.h"

#include <algorithm>

#include "engine/eval/terrain_groups.h"
#include "engine/game/font.h"
#include "engine/game/hud.h"
#include "engine/game/palette.h"
#include "engine/game/sprites.h"

namespace wc::eval {
namespace {

uint32_t palette_colour_at(const uint8_t* rgba, int width, int x, int y) {
  const uint8_t* px = rgba + (static_cast<size_t>(y) * width + x) * 4;
  return nearest_palette_colour(px[0], px[1], px[2]);
}

// A digit cell as the HUD draws it: kGlyphWidth x kGlyphHeight font pixels, each
// kHudDigitScale wide. Returns the digit 0..9, kBlank, or kNotAGlyph.
constexpr int kBlank = 10;
constexpr int kNotAGlyph = -1;

int read_cell(const uint8_t* rgba, int width, int x0, int y0) {
  constexpr int s = game::kHudDigitScale;
  bool lit[game::kGlyphHeight * s][game::kGlyphWidth * s];
  for (int y = 0; y < game::kGlyphHeight * s; ++y) {
    for (int x = 0; x < game::kGlyphWidth * s; ++x) {
      const uint32_t colour = palette_colour_at(rgba, width, x0 + x, y0 + y);
      if (colour == game::palette::kHudText) {
        lit[y][x] = true;
      } else if (colour == game::palette::kHudBack) {
        lit[y][x] = false;
      } else {
        return kNotAGlyph;
      }
    }
  }
  for (int digit = 0; digit <= kBlank; ++digit) {
    bool same = true;
    for (int y = 0; y < game::kGlyphHeight * s && same; ++y) {
      for (int x = 0; x < game::kGlyphWidth * s && same; ++x) {
        const bool drawn = digit != kBlank && game::digit_pixel(digit, x / s, y / s);
        same = lit[y][x] == drawn;
      }
    }
    if (same) return digit;
  }
  return kNotAGlyph;
}

}  // namespace

SpriteMatch match_player_sprite(const uint8_t* rgba, int width, int height,
                                const game::PixelRect& sprite) {
  SpriteMatch match;
  for (int facing = 0; facing < 4; ++facing) {
    for (int walk = 0; walk < 3; ++walk) {
      const game::Sprite& pose = game::player_sprite(static_cast<game::Facing>(facing), walk);
      int64_t opaque = 0, same = 0;
      for (int y = 0; y < game::kSpriteSize; ++y) {
        for (int x = 0; x < game::kSpriteSize; ++x) {
          const uint32_t pixel = pose[static_cast<size_t>(y * game::kSpriteSize + x)];
          const int fx = sprite.x + x, fy = sprite.y + y;
          if (!game::is_opaque(pixel) || fx < 0 || fy < 0 || fx >= width || fy >= height) continue;
          ++opaque;
          same += palette_colour_at(rgba, width, fx, fy) == pixel;
        }
      }
      if (opaque == 0) continue;
      match.pixel_share =
          std::max(match.pixel_share, static_cast<double>(same) / static_cast<double>(opaque));
      match.pose = match.pose || same == opaque;
    }
  }
  return match;
}

bool hud_digits_readable(const uint8_t* rgba, int width, int height) {
  const game::HudLayout layout = game::hud_layout();
  const game::PixelRect& box = layout.box;
  if (box.x + box.width > width || box.y + box.height > height) return false;
  int digits = 0;
  bool blank_seen = false;
  for (int i = 0; i < game::kHudMaxDigits; ++i) {
    const int x0 = layout.digits_x + i * (game::kGlyphWidth + 1) * game::kHudDigitScale;
    const int cell = read_cell(rgba, width, x0, layout.digits_y);
    if (cell == kNotAGlyph) return false;
    if (cell == kBlank) {
      blank_seen = true;
      continue;
    }
    if (blank_seen) return false;  // a digit after a gap
    if (digits == 0 && cell == 0 && i + 1 < game::kHudMaxDigits) {
      // A leading 0 is only the count zero, alone.
      const int next = read_cell(rgba, width, x0 + (game::kGlyphWidth + 1) * game::kHudDigitScale,
                                 layout.digits_y);
      if (next != kBlank) return false;
    }
    ++digits;
  }
  return digits > 0;
}

}  // namespace wc::eval
