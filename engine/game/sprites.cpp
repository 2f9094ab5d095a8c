// The sprites as character art, decoded to pixels on first use. Legend: '.' transparent,
// K outline, H hair, S skin, E eye, R shirt, B trousers, F shoe, P backpack, G/L/D leaves
// (mid, light, dark), T trunk, C/X/W crystal (body, shade, shine).
#include "engine/game/sprites.h"

#include <cstddef>

#include "engine/game/palette.h"

namespace wc::game {
namespace {

using Art = const char* const[];

uint32_t colour_of(char c) {
  switch (c) {
    case 'K':
    case 'E':
      return palette::kOutline;
    case 'H':
      return palette::kHair;
    case 'S':
      return palette::kSkin;
    case 'R':
      return palette::kShirt;
    case 'B':
      return palette::kTrousers;
    case 'F':
      return palette::kShoe;
    case 'P':
      return palette::kPack;
    case 'G':
      return palette::kLeaf;
    case 'L':
      return palette::kLeafLight;
    case 'D':
      return palette::kLeafDark;
    case 'T':
      return palette::kTrunk;
    case 'C':
      return palette::kCrystal;
    case 'X':
      return palette::kCrystalDark;
    case 'W':
      return palette::kCrystalShine;
    default:
      return palette::kTransparent;
  }
}

// Decodes `rows` lines of art into `out` starting at row `first_row`.
template <size_t N>
void decode(const char* const (&art)[N], int first_row, Sprite& out) {
  for (size_t y = 0; y < N; ++y) {
    for (int x = 0; x < kSpriteSize; ++x) {
      out[(first_row + y) * kSpriteSize + x] = colour_of(art[y][x]);
    }
  }
}

Sprite mirrored(const Sprite& sprite) {
  Sprite out{};
  for (int y = 0; y < kSpriteSize; ++y) {
    for (int x = 0; x < kSpriteSize; ++x) {
      out[y * kSpriteSize + x] = sprite[y * kSpriteSize + (kSpriteSize - 1 - x)];
    }
  }
  return out;
}

// Upper bodies (rows 0..12) for the front, back and side views.
constexpr Art kFront = {
    "................", ".....KKKKKK.....", "....KHHHHHHK....", "....KHHHHHHK....",
    "....KSSSSSSK....", "....KSESSESK....", "....KSSSSSSK....", ".....KKKKKK.....",
    "...KRRRRRRRRK...", "..KSRRRRRRRRSK..", "..KSRRRRRRRRSK..", "...KRRRRRRRRK...",
    "....KBBBBBBK....",
};
constexpr Art kBack = {
    "................", ".....KKKKKK.....", "....KHHHHHHK....", "....KHHHHHHK....",
    "....KHHHHHHK....", "....KHHHHHHK....", "....KSHHHHSK....", ".....KKKKKK.....",
    "...KRRRRRRRRK...", "..KSRKPPPPKRSK..", "..KSRKPPPPKRSK..", "...KRKKKKKKRK...",
    "....KBBBBBBK....",
};
constexpr Art kSide = {
    "................", ".....KKKKKK.....", "....KHHHHHHK....", "....KHHHHHHK....",
    "....KHHHSSSK....", "....KHHSSSESK...", "....KHSSSSSK....", ".....KKKKKK.....",
    "....KRRRRRRK....", "....KRRSRRRK....", "....KRRSRRRK....", "....KRRRRRRK....",
    "....KBBBBBBK....",
};
// Legs (rows 13..15): standing, stride A, stride B.
constexpr const char* const kFrontLegs[3][3] = {
    {"....KBBKKBBK....", "....KFFKKFFK....", "....KKK..KKK...."},
    {"....KFFKKBBK....", "....KKKKKFFK....", ".........KKK...."},
    {"....KBBKKFFK....", "....KFFKKKKK....", "....KKK........."},
};
constexpr const char* const kSideLegs[3][3] = {
    {".....KBBBBK.....", ".....KFFFFK.....", ".....KKKKKK....."},
    {"....KBBKKBBK....", "...KFFK..KFFK...", "...KKK....KKK..."},
    {".....KBKKBK.....", "....KFFKKFFK....", "....KKK..KKK...."},
};

constexpr Art kTree = {
    "................", ".....KKKKKK.....", "...KKGGGGGGKK...", "..KGGGLLGGGGGK..",
    "..KGGLLGGGGGGK..", ".KGGGLGGGGGGGGK.", ".KGGGGGGGGGDGGK.", ".KGGGGGGGGDDGGK.",
    ".KGGGGGGGGGGDGK.", "..KGGGGDGGGGGK..", "..KKGGGGGGDGKK..", "....KKKTTKKK....",
    "......KTTK......", "......KTTK......", ".....KTTTTK.....", "......KKKK......",
};
constexpr Art kCrystal = {
    "................", "................", ".......KK.......", "......KWCK......",
    ".....KWCCCK.....", "....KWCCCCXK....", "...KWCCCCCXXK...", "...KCCCCCCXXK...",
    "....KCCCCXXK....", ".....KCCCXK.....", "......KCXK......", ".......KK.......",
    "................", "................", "................", "................",
};
constexpr Art kIcon = {
    "..K..", ".KWK.", "KWCCK", "KCCXK", "KCXXK", ".KXK.", "..K..",
};

struct PlayerSprites {
  Sprite frames[4][3];  // [Facing][walk frame]
};

PlayerSprites build_player() {
  PlayerSprites sprites{};
  for (int walk = 0; walk < 3; ++walk) {
    Sprite& down = sprites.frames[static_cast<int>(Facing::kDown)][walk];
    decode(kFront, 0, down);
    decode(kFrontLegs[walk], 13, down);
    Sprite& up = sprites.frames[static_cast<int>(Facing::kUp)][walk];
    decode(kBack, 0, up);
    decode(kFrontLegs[walk], 13, up);
    Sprite& right = sprites.frames[static_cast<int>(Facing::kRight)][walk];
    decode(kSide, 0, right);
    decode(kSideLegs[walk], 13, right);
    sprites.frames[static_cast<int>(Facing::kLeft)][walk] = mirrored(right);
  }
  return sprites;
}

Sprite build(const char* const (&art)[kSpriteSize]) {
  Sprite sprite{};
  decode(art, 0, sprite);
  return sprite;
}

}  // namespace

const Sprite& player_sprite(Facing facing, int walk_frame) {
  static const PlayerSprites sprites = build_player();
  return sprites.frames[static_cast<int>(facing)][walk_frame % 3];
}

const Sprite& tree_sprite() {
  static const Sprite sprite = build(kTree);
  return sprite;
}

const Sprite& crystal_sprite() {
  static const Sprite sprite = build(kCrystal);
  return sprite;
}

const std::array<uint32_t, kHudIconWidth * kHudIconHeight>& hud_crystal_icon() {
  static const auto icon = [] {
    std::array<uint32_t, kHudIconWidth * kHudIconHeight> out{};
    for (int y = 0; y < kHudIconHeight; ++y) {
      for (int x = 0; x < kHudIconWidth; ++x) out[y * kHudIconWidth + x] = colour_of(kIcon[y][x]);
    }
    return out;
  }();
  return icon;
}

}  // namespace wc::game
