// Pixels as kinds of ground: every colour of the game's palette belongs to one terrain group
// (grass, sand, water, wall, tree, crystal, other), and a model's off-palette pixel to the group
// of its nearest palette colour. The world-content metrics (DESIGN.md §13) count these groups.
#pragma once

#include <array>
#include <cstdint>
#include <vector>

#include "engine/game/game.h"

namespace wc::eval {

// Note [Terrain groups]: a group is the tile kind that draws a colour. Grass and its tufts are
// grass; sand and its dots sand; water and its waves water; wall, mortar and chips wall; the
// three leaf greens and the trunk tree; the crystal's body, shade and shine crystal. The outline
// is drawn by trees, crystals and the player alike, so it is "other", with the player's and the
// HUD's colours: anything that is not ground. Trees and crystals stand on grass, so their tiles
// count some grass too, as the game draws them.
enum class TerrainGroup : uint8_t { kGrass, kSand, kWater, kWall, kTree, kCrystal, kOther };
inline constexpr int kTerrainGroupCount = 7;

// "grass", "sand", "water", "wall", "tree", "crystal", "other".
const char* terrain_group_name(TerrainGroup group);

struct PaletteColour {
  uint32_t rgba;  // game::pack_rgba
  TerrainGroup group;
};

// Every colour the game draws (game/palette.h), with its group.
const std::vector<PaletteColour>& game_palette_groups();

// The group of the palette colour nearest to (r, g, b) (squared RGB distance; an exact palette
// colour is its own nearest).
TerrainGroup terrain_group_of(uint8_t r, uint8_t g, uint8_t b);

// The palette colour nearest to (r, g, b), packed like game::pack_rgba.
uint32_t nearest_palette_colour(uint8_t r, uint8_t g, uint8_t b);

// The group of every pixel of a width x height RGBA8 frame, row-major.
std::vector<TerrainGroup> terrain_groups(const uint8_t* rgba, int width, int height);

// Pixels per group over the frame's pixels outside `excluded` (the screen overlays).
using TerrainHistogram = std::array<int64_t, kTerrainGroupCount>;
TerrainHistogram terrain_histogram(const std::vector<TerrainGroup>& groups, int width, int height,
                                   const std::vector<game::PixelRect>& excluded);

// Half the L1 distance between the two histograms as shares: 0 for the same mix, 1 for
// disjoint ones; an empty histogram is as far as can be from a non-empty one (1), and two
// empty ones agree (0).
double total_variation(const TerrainHistogram& a, const TerrainHistogram& b);
// The share of the histogram's pixels that are not grass; 0 when it is empty.
double non_grass_share(const TerrainHistogram& histogram);

}  // namespace wc::eval
