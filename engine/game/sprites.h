// Pixel-art sprites (player, tree, crystal, HUD icon) decoded once from character art into
// RGBA pixels; 0 marks a transparent pixel.
#pragma once

#include <array>
#include <cstdint>

namespace wc::game {

inline constexpr int kSpriteSize = 16;
using Sprite = std::array<uint32_t, kSpriteSize * kSpriteSize>;

// Which way the player looks; left is drawn as right mirrored.
enum class Facing : uint8_t { kDown, kUp, kLeft, kRight };

// `walk_frame`: 0 standing, 1 and 2 the two strides. The sprite for kLeft is already mirrored.
const Sprite& player_sprite(Facing facing, int walk_frame);
const Sprite& tree_sprite();
const Sprite& crystal_sprite();

// The HUD's crystal icon, kHudIconWidth x kHudIconHeight.
inline constexpr int kHudIconWidth = 5;
inline constexpr int kHudIconHeight = 7;
const std::array<uint32_t, kHudIconWidth * kHudIconHeight>& hud_crystal_icon();

}  // namespace wc::game
