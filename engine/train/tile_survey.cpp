// See tile_survey.h.
#include "engine/train/tile_survey.h"

#include <array>
#include <cstring>
#include <random>
#include <set>
#include <string>
#include <unordered_map>
#include <utility>

#include "engine/core/error.h"
#include "engine/game/canvas.h"
#include "engine/game/font.h"
#include "engine/game/game.h"
#include "engine/game/hud.h"
#include "engine/game/palette.h"
#include "engine/game/render.h"
#include "engine/game/sprites.h"
#include "engine/model/codebook.h"

namespace wc::train {
namespace {

using game::PixelRect;
using Image = std::vector<uint8_t>;

constexpr game::Tile kTileTypes[] = {game::Tile::kGrass, game::Tile::kSand, game::Tile::kWater,
                                     game::Tile::kWall,  game::Tile::kTree, game::Tile::kCrystal};
// Draws per wanted texture before a type is taken to have no more (water has 16 in all).
constexpr int kDrawsPerTexture = 200;
// Tiles are drawn within this many tiles of the origin, where the game's pixel arithmetic holds.
constexpr int32_t kPlaceRange = 1 << 20;

int32_t random_place(std::mt19937_64& random) {
  return static_cast<int32_t>(random() % (uint64_t{2} * kPlaceRange)) - kPlaceRange;
}

// The book's colour numbers of game pixels, given in order of first appearance.
class ColourIndex {
 public:
  uint8_t operator()(uint32_t pixel) {
    if (!game::is_opaque(pixel)) return model::kTransparentColour;
    const auto found = known_.find(pixel);
    if (found != known_.end()) return found->second;
    if (colours_.size() == model::kMaxCodebookColours) {
      throw Error("tile survey", "the game draws more than " +
                                     std::to_string(model::kMaxCodebookColours) + " colours");
    }
    uint8_t rgba[4];
    std::memcpy(rgba, &pixel, 4);
    colours_.push_back({rgba[0], rgba[1], rgba[2]});
    const auto index = static_cast<uint8_t>(colours_.size() - 1);
    known_.emplace(pixel, index);
    return index;
  }
  const std::vector<std::array<uint8_t, 3>>& colours() const { return colours_; }

 private:
  std::unordered_map<uint32_t, uint8_t> known_;
  std::vector<std::array<uint8_t, 3>> colours_;
};

// Game pixels with a Canvas over them, transparent until drawn on.
struct Picture {
  int width, height;
  std::vector<uint32_t> pixels;
  Picture(int w, int h) : width(w), height(h), pixels(static_cast<size_t>(w) * h, 0) {}
  game::Canvas canvas() { return {reinterpret_cast<uint8_t*>(pixels.data()), width, height}; }
  uint32_t& at(int x, int y) { return pixels[static_cast<size_t>(y) * width + x]; }
  uint32_t at(int x, int y) const { return pixels[static_cast<size_t>(y) * width + x]; }
};

Image crop(const Picture& picture, const PixelRect& rect, ColourIndex& index) {
  Image image;
  image.reserve(static_cast<size_t>(rect.width) * rect.height);
  for (int y = rect.y; y < rect.y + rect.height; ++y) {
    for (int x = rect.x; x < rect.x + rect.width; ++x) image.push_back(index(picture.at(x, y)));
  }
  return image;
}

void check_inputs(int width, int height, int per_type) {
  if (per_type < 1 || per_type > kMaxTilesPerType) {
    throw Error("--per-type", "must be in [1, " + std::to_string(kMaxTilesPerType) + "], got " +
                                  std::to_string(per_type));
  }
  const auto fits = [](int side) {
    return side >= game::kTileSize && side <= model::kMaxTileFrameSide &&
           side % game::kTileSize == 0;
  };
  if (!fits(width) || !fits(height)) {
    throw Error("--frame", "each side must be a multiple of " + std::to_string(game::kTileSize) +
                               " in [" + std::to_string(game::kTileSize) + ", " +
                               std::to_string(model::kMaxTileFrameSide) + "], got " +
                               std::to_string(width) + "x" + std::to_string(height));
  }
  // Note [Tile tokens]: the overlay row holds the phase and one place per layer.
  const int min_width = kTileLayers * game::kTileSize;
  if (width < min_width) {
    throw Error("--frame", "the overlay row of a frame " + std::to_string(width) +
                               " pixels wide holds " + std::to_string(width / game::kTileSize) +
                               " layers, the game has " + std::to_string(kTileLayers) +
                               ": the width must be at least " + std::to_string(min_width));
  }
}

// Up to `wanted` textures of `type` not in `seen`, painted at random places and times.
std::vector<Image> survey_type(game::Tile type, int wanted, std::mt19937_64& random,
                               std::set<Image>& seen, ColourIndex& index) {
  Picture texture(game::kTileSize, game::kTileSize);
  const PixelRect whole{0, 0, game::kTileSize, game::kTileSize};
  std::vector<Image> found;
  for (int draw = 0; draw < kDrawsPerTexture * wanted && static_cast<int>(found.size()) < wanted;
       ++draw) {
    const uint64_t world_seed = random();
    const int32_t x = random_place(random), y = random_place(random);
    const uint64_t frame_index = random();
    game::paint_tile(type, world_seed, x, y, frame_index, texture.pixels.data());
    Image image = crop(texture, whole, index);
    if (seen.insert(image).second) found.push_back(std::move(image));
  }
  return found;
}

void add_image(model::TileLayer& layer, Image image) {
  for (const Image& known : layer.images) {
    if (known == image) return;
  }
  layer.images.push_back(std::move(image));
}

model::TileLayer layer_at(const std::string& name, const PixelRect& rect) {
  model::TileLayer layer;
  layer.name = name;
  layer.x = rect.x;
  layer.y = rect.y;
  layer.width = rect.width;
  layer.height = rect.height;
  return layer;
}

model::TileLayer sprite_layer(const PixelRect& rect, ColourIndex& index) {
  model::TileLayer layer = layer_at("sprite", rect);
  const PixelRect whole{0, 0, game::kSpriteSize, game::kSpriteSize};
  for (const game::Facing facing :
       {game::Facing::kDown, game::Facing::kUp, game::Facing::kLeft, game::Facing::kRight}) {
    for (int walk_frame = 0; walk_frame < 3; ++walk_frame) {
      Picture pose(game::kSpriteSize, game::kSpriteSize);
      pose.pixels.assign(game::player_sprite(facing, walk_frame).begin(),
                         game::player_sprite(facing, walk_frame).end());
      add_image(layer, crop(pose, whole, index));
    }
  }
  return layer;
}

// Where draw_hud draws digit `place` of the count.
PixelRect digit_place(int place) {
  const game::HudLayout layout = game::hud_layout();
  return {layout.digits_x + place * (game::kGlyphWidth + 1) * game::kHudDigitScale, layout.digits_y,
          game::kGlyphWidth * game::kHudDigitScale, game::kGlyphHeight * game::kHudDigitScale};
}

// The HUD as draw_hud draws it for `count`.
Picture hud_drawn(int count) {
  const PixelRect box = game::hud_layout().box;
  Picture picture(box.x + box.width, box.y + box.height);
  game::draw_hud(picture.canvas(), count);
  return picture;
}

// The box with its digits' pixels showing the box's back.
model::TileLayer hud_layer(const PixelRect& rect, ColourIndex& index) {
  Picture box = hud_drawn(0);
  for (int place = 0; place < game::kHudMaxDigits; ++place) {
    const PixelRect cell = digit_place(place);
    for (int y = cell.y; y < cell.y + cell.height; ++y) {
      for (int x = cell.x; x < cell.x + cell.width; ++x) {
        if (box.at(x, y) == game::palette::kHudText) box.at(x, y) = game::palette::kHudBack;
      }
    }
  }
  model::TileLayer layer = layer_at("hud", rect);
  layer.images.push_back(crop(box, rect, index));
  return layer;
}

// Blank, then each digit as draw_hud draws it at `place` (in a count whose other digits are 1s).
model::TileLayer digit_layer(int place, ColourIndex& index) {
  const PixelRect cell = digit_place(place);
  model::TileLayer layer = layer_at("digit" + std::to_string(place), cell);
  layer.images.emplace_back(static_cast<size_t>(cell.width) * cell.height,
                            model::kTransparentColour);
  for (int digit = 0; digit <= 9; ++digit) {
    const Picture drawn = hud_drawn(std::stoi(std::string(place, '1') + std::to_string(digit)));
    Picture lit(drawn.width, drawn.height);
    for (size_t i = 0; i < drawn.pixels.size(); ++i) {
      if (drawn.pixels[i] == game::palette::kHudText) lit.pixels[i] = drawn.pixels[i];
    }
    layer.images.push_back(crop(lit, cell, index));
  }
  return layer;
}

void check_inside(const model::TileLayer& layer, int width, int height) {
  if (layer.x + layer.width <= width && layer.y + layer.height <= height) return;
  throw Error("--frame", "the game's " + layer.name + " (" + std::to_string(layer.width) + "x" +
                             std::to_string(layer.height) + " at " + std::to_string(layer.x) +
                             ", " + std::to_string(layer.y) + ") does not fit a " +
                             std::to_string(width) + "x" + std::to_string(height) + " frame");
}

}  // namespace

TileSurvey survey_tiles(int width, int height, int per_type, uint64_t seed) {
  check_inputs(width, height, per_type);
  TileSurvey survey;
  model::TileBook& book = survey.book;
  book.tile = game::kTileSize;
  book.frame_width = width;
  book.frame_height = height;
  ColourIndex index;
  std::mt19937_64 random(seed);
  std::set<Image> seen;
  for (const game::Tile type : kTileTypes) {
    std::vector<Image> found = survey_type(type, per_type, random, seen, index);
    survey.ground_per_type.push_back(static_cast<int>(found.size()));
    for (Image& image : found) book.ground.push_back(std::move(image));
  }
  game::GameConfig config;
  config.width = width;
  config.height = height;
  const game::Game game(config);
  book.layers.push_back(sprite_layer(game.player_rect(), index));
  book.layers.push_back(hud_layer(game.hud_rect(), index));
  for (int place = 0; place < game::kHudMaxDigits; ++place) {
    book.layers.push_back(digit_layer(place, index));
  }
  for (const model::TileLayer& layer : book.layers) check_inside(layer, width, height);
  book.colours = index.colours();
  return survey;
}

model::TileBook survey_tile_book(int width, int height, int per_type, uint64_t seed) {
  return survey_tiles(width, height, per_type, seed).book;
}

}  // namespace wc::train
