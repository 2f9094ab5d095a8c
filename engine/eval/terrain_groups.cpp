// See terrain_groups.h.
#include "engine/eval/terrain_groups.h"

#include <cstring>
#include <limits>

#include "engine/game/palette.h"

namespace wc::eval {
namespace {

struct Rgb {
  int r, g, b;
};

Rgb unpack(uint32_t rgba) {
  uint8_t bytes[4];
  std::memcpy(bytes, &rgba, 4);  // pack_rgba stores R, G, B, A in byte order
  return {bytes[0], bytes[1], bytes[2]};
}

const PaletteColour& nearest(uint8_t r, uint8_t g, uint8_t b) {
  const std::vector<PaletteColour>& colours = game_palette_groups();
  static const std::vector<Rgb> rgb = [&colours] {
    std::vector<Rgb> out;
    for (const PaletteColour& colour : colours) out.push_back(unpack(colour.rgba));
    return out;
  }();
  size_t best = 0;
  int best_distance = std::numeric_limits<int>::max();
  for (size_t i = 0; i < rgb.size(); ++i) {
    const int dr = rgb[i].r - r, dg = rgb[i].g - g, db = rgb[i].b - b;
    const int distance = dr * dr + dg * dg + db * db;
    if (distance < best_distance) {
      best_distance = distance;
      best = i;
      if (distance == 0) break;
    }
  }
  return colours[best];
}

}  // namespace

const char* terrain_group_name(TerrainGroup group) {
  switch (group) {
    case TerrainGroup::kGrass:
      return "grass";
    case TerrainGroup::kSand:
      return "sand";
    case TerrainGroup::kWater:
      return "water";
    case TerrainGroup::kWall:
      return "wall";
    case TerrainGroup::kTree:
      return "tree";
    case TerrainGroup::kCrystal:
      return "crystal";
    case TerrainGroup::kOther:
      return "other";
  }
  return "other";
}

const std::vector<PaletteColour>& game_palette_groups() {
  using G = TerrainGroup;
  namespace p = game::palette;
  static const std::vector<PaletteColour> colours = {
      {p::kGrass, G::kGrass},         {p::kGrassTuft, G::kGrass},
      {p::kSand, G::kSand},           {p::kSandDot, G::kSand},
      {p::kWater, G::kWater},         {p::kWaterWave, G::kWater},
      {p::kWall, G::kWall},           {p::kWallMortar, G::kWall},
      {p::kWallChip, G::kWall},       {p::kLeaf, G::kTree},
      {p::kLeafLight, G::kTree},      {p::kLeafDark, G::kTree},
      {p::kTrunk, G::kTree},          {p::kCrystal, G::kCrystal},
      {p::kCrystalDark, G::kCrystal}, {p::kCrystalShine, G::kCrystal},
      {p::kOutline, G::kOther},       {p::kSkin, G::kOther},
      {p::kHair, G::kOther},          {p::kShirt, G::kOther},
      {p::kTrousers, G::kOther},      {p::kShoe, G::kOther},
      {p::kPack, G::kOther},          {p::kHudBack, G::kOther},
      {p::kHudBorder, G::kOther},     {p::kHudText, G::kOther},
  };
  return colours;
}

TerrainGroup terrain_group_of(uint8_t r, uint8_t g, uint8_t b) {
  return nearest(r, g, b).group;
}

uint32_t nearest_palette_colour(uint8_t r, uint8_t g, uint8_t b) {
  return nearest(r, g, b).rgba;
}

std::vector<TerrainGroup> terrain_groups(const uint8_t* rgba, int width, int height) {
  const size_t n = static_cast<size_t>(width) * static_cast<size_t>(height);
  std::vector<TerrainGroup> groups(n);
  // Frames hold few colours, mostly in runs: remember the last one looked up.
  uint32_t last_key = 0xFFFFFFFFu;
  TerrainGroup last_group = TerrainGroup::kOther;
  for (size_t i = 0; i < n; ++i) {
    const uint8_t* px = rgba + i * 4;
    const uint32_t key = uint32_t{px[0]} | (uint32_t{px[1]} << 8) | (uint32_t{px[2]} << 16);
    if (key != last_key) {
      last_key = key;
      last_group = terrain_group_of(px[0], px[1], px[2]);
    }
    groups[i] = last_group;
  }
  return groups;
}

TerrainHistogram terrain_histogram(const std::vector<TerrainGroup>& groups, int width, int height,
                                   const std::vector<game::PixelRect>& excluded) {
  TerrainHistogram histogram{};
  for (int y = 0; y < height; ++y) {
    for (int x = 0; x < width; ++x) {
      bool inside = false;
      for (const game::PixelRect& rect : excluded) inside = inside || rect.contains(x, y);
      if (!inside) ++histogram[static_cast<size_t>(groups[static_cast<size_t>(y) * width + x])];
    }
  }
  return histogram;
}

double total_variation(const TerrainHistogram& a, const TerrainHistogram& b) {
  int64_t total_a = 0, total_b = 0;
  for (int i = 0; i < kTerrainGroupCount; ++i) total_a += a[i], total_b += b[i];
  if (total_a == 0 || total_b == 0) return total_a == total_b ? 0.0 : 1.0;
  double distance = 0.0;
  for (int i = 0; i < kTerrainGroupCount; ++i) {
    const double d = static_cast<double>(a[i]) / static_cast<double>(total_a) -
                     static_cast<double>(b[i]) / static_cast<double>(total_b);
    distance += d < 0 ? -d : d;
  }
  return 0.5 * distance;
}

double non_grass_share(const TerrainHistogram& histogram) {
  int64_t total = 0;
  for (int64_t count : histogram) total += count;
  if (total == 0) return 0.0;
  return 1.0 - static_cast<double>(histogram[static_cast<size_t>(TerrainGroup::kGrass)]) /
                   static_cast<double>(total);
}

}  // namespace wc::eval
