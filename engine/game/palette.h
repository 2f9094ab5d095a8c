// The game's colours: few, bold and flat, so a small world model can learn them exactly.
#pragma once

#include <cstdint>

namespace wc::game {

// A pixel packed so that storing it with memcpy writes the bytes R, G, B, A in that order.
inline constexpr uint32_t pack_rgba(uint8_t r, uint8_t g, uint8_t b, uint8_t a = 255) {
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
  return (uint32_t{r} << 24) | (uint32_t{g} << 16) | (uint32_t{b} << 8) | a;
#else
  return uint32_t{r} | (uint32_t{g} << 8) | (uint32_t{b} << 16) | (uint32_t{a} << 24);
#endif
}
inline constexpr bool is_opaque(uint32_t pixel) {
  return pixel != 0;
}

namespace palette {
inline constexpr uint32_t kTransparent = 0;
inline constexpr uint32_t kOutline = pack_rgba(28, 26, 36);

inline constexpr uint32_t kGrass = pack_rgba(98, 178, 74);
inline constexpr uint32_t kGrassTuft = pack_rgba(70, 140, 56);
inline constexpr uint32_t kSand = pack_rgba(230, 208, 140);
inline constexpr uint32_t kSandDot = pack_rgba(198, 172, 108);
inline constexpr uint32_t kWater = pack_rgba(46, 102, 204);
inline constexpr uint32_t kWaterWave = pack_rgba(130, 180, 244);
inline constexpr uint32_t kWall = pack_rgba(150, 146, 160);
inline constexpr uint32_t kWallMortar = pack_rgba(92, 88, 104);
inline constexpr uint32_t kWallChip = pack_rgba(120, 116, 132);

inline constexpr uint32_t kLeaf = pack_rgba(40, 122, 50);
inline constexpr uint32_t kLeafLight = pack_rgba(86, 164, 70);
inline constexpr uint32_t kLeafDark = pack_rgba(26, 86, 38);
inline constexpr uint32_t kTrunk = pack_rgba(122, 80, 42);

inline constexpr uint32_t kCrystal = pack_rgba(232, 72, 204);
inline constexpr uint32_t kCrystalDark = pack_rgba(150, 36, 140);
inline constexpr uint32_t kCrystalShine = pack_rgba(255, 236, 252);

inline constexpr uint32_t kSkin = pack_rgba(242, 196, 150);
inline constexpr uint32_t kHair = pack_rgba(112, 62, 30);
inline constexpr uint32_t kShirt = pack_rgba(222, 52, 48);
inline constexpr uint32_t kTrousers = pack_rgba(50, 72, 164);
inline constexpr uint32_t kShoe = pack_rgba(64, 42, 32);
inline constexpr uint32_t kPack = pack_rgba(176, 118, 52);

inline constexpr uint32_t kHudBack = pack_rgba(26, 24, 44);
inline constexpr uint32_t kHudBorder = pack_rgba(236, 236, 236);
inline constexpr uint32_t kHudText = pack_rgba(255, 255, 255);
}  // namespace palette

}  // namespace wc::game
