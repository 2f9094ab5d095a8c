// The digit glyphs: each row of a glyph is 3 bits, most significant bit leftmost.
#include "engine/game/font.h"

namespace wc::game {
namespace {

constexpr uint8_t kDigits[10][kGlyphHeight] = {
    {0b111, 0b101, 0b101, 0b101, 0b111},  // 0
    {0b010, 0b110, 0b010, 0b010, 0b111},  // 1
    {0b111, 0b001, 0b111, 0b100, 0b111},  // 2
    {0b111, 0b001, 0b011, 0b001, 0b111},  // 3
    {0b101, 0b101, 0b111, 0b001, 0b001},  // 4
    {0b111, 0b100, 0b111, 0b001, 0b111},  // 5
    {0b111, 0b100, 0b111, 0b101, 0b111},  // 6
    {0b111, 0b001, 0b010, 0b010, 0b010},  // 7
    {0b111, 0b101, 0b111, 0b101, 0b111},  // 8
    {0b111, 0b101, 0b111, 0b001, 0b111},  // 9
};

}  // namespace

bool digit_pixel(int digit, int x, int y) {
  if (digit < 0 || digit > 9 || x < 0 || x >= kGlyphWidth || y < 0 || y >= kGlyphHeight) {
    return false;
  }
  return (kDigits[digit][y] >> (kGlyphWidth - 1 - x)) & 1;
}

}  // namespace wc::game
