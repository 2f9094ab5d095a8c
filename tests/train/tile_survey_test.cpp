// The game's tile book (engine/train/tile_survey.h): its ground and layers, and the contract that
// makes it a tokenizer: the true tiles with the layers' images over them are the game's frames,
// byte for byte.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cstring>
#include <filesystem>
#include <random>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "engine/core/error.h"
#include "engine/game/canvas.h"
#include "engine/game/game.h"
#include "engine/game/hash.h"
#include "engine/game/hud.h"
#include "engine/game/palette.h"
#include "engine/game/render.h"
#include "engine/game/sprites.h"
#include "engine/model/tile_book.h"
#include "engine/train/tile_survey.h"
#include "tests/game/walk.h"

namespace wc::train {
namespace {

namespace fs = std::filesystem;
using game::Action;
using game::Game;
using game::GameConfig;
using model::TileBook;
using model::TileLayer;
using ::testing::HasSubstr;

const TileBook& book_128() {
  static const TileBook book = survey_tile_book(128, 128, 32, 1);
  return book;
}

// RGBA bytes of a game pixel.
std::array<uint8_t, 4> bytes_of(uint32_t pixel) {
  std::array<uint8_t, 4> out;
  std::memcpy(out.data(), &pixel, 4);
  return out;
}

// `image` of `layer` drawn over the RGBA8 `rgba` of a `width`-pixel-wide picture.
void draw_image(const TileBook& book, const TileLayer& layer, int image, int width, uint8_t* rgba) {
  const std::vector<uint8_t>& pixels = layer.images.at(static_cast<size_t>(image));
  for (int y = 0; y < layer.height; ++y) {
    for (int x = 0; x < layer.width; ++x) {
      const uint8_t c = pixels[static_cast<size_t>(y) * layer.width + x];
      if (c == model::kTransparentColour) continue;
      uint8_t* at = rgba + (static_cast<size_t>(layer.y + y) * width + layer.x + x) * 4;
      std::copy(book.colours[c].begin(), book.colours[c].end(), at);
      at[3] = 255;
    }
  }
}

// The index of the sprite layer's image that is the game's pose.
int pose_image(const TileBook& book, game::Facing facing, int walk_frame) {
  const TileLayer& layer = book.layers.at(0);
  const game::Sprite& sprite = game::player_sprite(facing, walk_frame);
  for (size_t i = 0; i < layer.images.size(); ++i) {
    bool same = true;
    for (size_t p = 0; same && p < sprite.size(); ++p) {
      const uint8_t c = layer.images[i][p];
      same = game::is_opaque(sprite[p])
                 ? c != model::kTransparentColour &&
                       std::equal(book.colours[c].begin(), book.colours[c].end(),
                                  bytes_of(sprite[p]).begin())
                 : c == model::kTransparentColour;
    }
    if (same) return static_cast<int>(i);
  }
  return -1;
}

// The digit layers' images for `count` as the HUD shows it: place i holds the i-th digit.
std::vector<int> digit_images(int count) {
  const std::string digits = std::to_string(std::clamp(count, 0, 999));
  std::vector<int> images;
  for (size_t place = 0; place < 3; ++place) {
    images.push_back(place < digits.size() ? digits[place] - '0' + 1 : 0);
  }
  return images;
}

// The frame the book composes for `game` now: the true tiles, then the layers' images.
std::vector<uint8_t> composed(const TileBook& book, const Game& game) {
  std::vector<uint8_t> rgba(static_cast<size_t>(game.width()) * game.height() * 4);
  const game::Canvas canvas{rgba.data(), game.width(), game.height()};
  const int first_x = game::floor_div(game.camera_x(), game::kTileSize);
  const int first_y = game::floor_div(game.camera_y(), game::kTileSize);
  uint32_t texture[game::kTileSize * game::kTileSize];
  for (int ty = first_y; ty <= first_y + game.height() / game::kTileSize; ++ty) {
    for (int tx = first_x; tx <= first_x + game.width() / game::kTileSize; ++tx) {
      game::paint_tile(game.tile_at(tx, ty), game.seed(), tx, ty, game.frame_index(), texture);
      canvas.blit(texture, game::kTileSize, game::kTileSize, tx * game::kTileSize - game.camera_x(),
                  ty * game::kTileSize - game.camera_y());
    }
  }
  const int pose = pose_image(book, game.facing(), game.walk_frame());
  EXPECT_GE(pose, 0) << "no image of the pose";
  draw_image(book, book.layers[0], std::max(pose, 0), game.width(), rgba.data());
  draw_image(book, book.layers[1], 0, game.width(), rgba.data());
  const std::vector<int> digits = digit_images(game.crystals_collected());
  for (size_t place = 0; place < digits.size(); ++place) {
    draw_image(book, book.layers[2 + place], digits[place], game.width(), rgba.data());
  }
  return rgba;
}

// Whether the composed frame is the game's; says where it first differs when not.
::testing::AssertionResult composes_the_frame(const TileBook& book, const Game& game) {
  const std::vector<uint8_t> mine = composed(book, game);
  const std::vector<uint8_t>& frame = game.frame();
  const auto [a, b] = std::mismatch(mine.begin(), mine.end(), frame.begin());
  if (a == mine.end()) return ::testing::AssertionSuccess();
  const auto pixel = (a - mine.begin()) / 4;
  return ::testing::AssertionFailure()
         << "frame " << game.frame_index() << " of seed " << game.seed() << " differs at pixel ("
         << pixel % game.width() << ", " << pixel / game.width() << ")";
}

// Random walks that hold an action for a few steps (so the stride cycles), turning at walls.
std::vector<Action> random_walk(uint32_t seed, int steps) {
  std::mt19937 random(seed);
  std::vector<Action> actions;
  while (static_cast<int>(actions.size()) < steps) {
    const auto action = static_cast<Action>(random() % game::kActionCount);
    actions.insert(actions.end(), 1 + random() % 8, action);
  }
  actions.resize(static_cast<size_t>(steps));
  return actions;
}

TEST(TileSurvey, GroundHoldsEachTypesTexturesWaterHasSixteen) {
  const TileSurvey survey = survey_tiles(128, 128, 32, 1);
  EXPECT_EQ(survey.ground_per_type, (std::vector<int>{32, 32, 16, 32, 32, 32}));
  const TileBook& book = survey.book;
  EXPECT_EQ(book.tile, 16);
  EXPECT_EQ(book.ground.size(), 176u);
  EXPECT_LE(book.colours.size(), 64u);
  EXPECT_EQ(std::set<std::vector<uint8_t>>(book.ground.begin(), book.ground.end()).size(), 176u);
  for (const auto& entry : book.ground) {
    ASSERT_EQ(entry.size(), 256u);
    for (const uint8_t c : entry) ASSERT_LT(c, book.colours.size());
  }
  EXPECT_EQ(survey_tiles(128, 128, 5, 1).ground_per_type, (std::vector<int>{5, 5, 5, 5, 5, 5}));
}

TEST(TileSurvey, LayersSitWhereTheGameDrawsThem) {
  const TileBook& book = book_128();
  ASSERT_EQ(book.layers.size(), static_cast<size_t>(kTileLayers));
  const auto rect = [](const TileLayer& l) {
    return std::vector<int>{l.x, l.y, l.width, l.height};
  };
  EXPECT_EQ(book.layers[0].name, "sprite");
  EXPECT_EQ(rect(book.layers[0]), (std::vector<int>{56, 56, 16, 16}));
  EXPECT_EQ(book.layers[1].name, "hud");
  EXPECT_EQ(rect(book.layers[1]), (std::vector<int>{2, 2, 36, 14}));
  for (int place = 0; place < 3; ++place) {
    const TileLayer& digit = book.layers[2 + static_cast<size_t>(place)];
    EXPECT_EQ(digit.name, "digit" + std::to_string(place));
    EXPECT_EQ(rect(digit), (std::vector<int>{12 + 8 * place, 4, 6, 10}));
    ASSERT_EQ(digit.images.size(), 11u);
    EXPECT_TRUE(std::all_of(digit.images[0].begin(), digit.images[0].end(),
                            [](uint8_t c) { return c == model::kTransparentColour; }));
  }
  const TileLayer& sprite = book.layers[0];
  EXPECT_LE(sprite.images.size(), 12u);
  EXPECT_GE(sprite.images.size(), 4u);
  for (const auto& image : sprite.images) {
    EXPECT_TRUE(std::any_of(image.begin(), image.end(),
                            [](uint8_t c) { return c != model::kTransparentColour; }));
  }
  ASSERT_EQ(book.layers[1].images.size(), 1u);
  for (const uint8_t c : book.layers[1].images[0]) EXPECT_NE(c, model::kTransparentColour);
}

TEST(TileSurvey, DigitImagesOverTheBoxAreTheHudAsDrawn) {
  const TileBook& book = book_128();
  const game::PixelRect box = game::hud_layout().box;
  const int width = box.x + box.width, height = box.y + box.height;
  for (const int count : {0, 7, 10, 42, 305, 999, 1500}) {
    std::vector<uint8_t> drawn(static_cast<size_t>(width) * height * 4, 0);
    game::draw_hud(game::Canvas{drawn.data(), width, height}, count);
    std::vector<uint8_t> mine(drawn.size(), 0);
    draw_image(book, book.layers[1], 0, width, mine.data());
    const std::vector<int> digits = digit_images(count);
    for (size_t place = 0; place < digits.size(); ++place) {
      draw_image(book, book.layers[2 + place], digits[place], width, mine.data());
    }
    EXPECT_EQ(mine, drawn) << "count " << count;
  }
}

TEST(TileSurvey, ComposesTheGamesFramesExactly) {
  std::set<std::pair<int, int>> phases;
  std::set<std::pair<int, int>> poses;
  for (const uint32_t seed : {1u, 7u, 21u, 1234u}) {
    Game game(GameConfig{128, 128, seed, true});
    ASSERT_TRUE(composes_the_frame(book_128(), game));
    for (const Action action : random_walk(seed, 150)) {
      game.step(action);
      ASSERT_TRUE(composes_the_frame(book_128(), game));
      phases.insert({game::floor_mod(game.camera_x(), 16), game::floor_mod(game.camera_y(), 16)});
      poses.insert({static_cast<int>(game.facing()), game.walk_frame()});
    }
  }
  EXPECT_EQ(phases.size(), 4u);  // every phase of the tile grid was seen
  EXPECT_GE(poses.size(), 9u);
}

TEST(TileSurvey, ComposesFramesWhileCrystalsAreCollected) {
  Game game(GameConfig{128, 128, 21, true});
  const auto is_crystal = [&](game::TileCoord c) {
    return game.tile_at(c.x, c.y) == game::Tile::kCrystal;
  };
  for (int collected = 1; collected <= 3; ++collected) {
    const auto path = game::testing::path_to_nearest(game, is_crystal, 30);
    ASSERT_TRUE(path.has_value());
    for (const Action action : game::testing::actions_along(*path)) {
      game.step(action);
      ASSERT_TRUE(composes_the_frame(book_128(), game));
    }
    ASSERT_EQ(game.crystals_collected(), collected);
  }
}

TEST(TileSurvey, ComposesFramesOfOtherSizes) {
  for (const auto& [width, height] : {std::pair{256, 144}, std::pair{80, 48}}) {
    const TileBook book = survey_tile_book(width, height, 8, 3);
    EXPECT_EQ(book.frame_width, width);
    EXPECT_EQ(book.frame_height, height);
    Game game(GameConfig{width, height, 5, true});
    for (const Action action : random_walk(9, 60)) {
      game.step(action);
      ASSERT_TRUE(composes_the_frame(book, game)) << width << "x" << height;
    }
  }
}

TEST(TileSurvey, IsTheSameForASeedAndReadsBackFromAFile) {
  const std::string text = model::tile_book_text(book_128());
  EXPECT_EQ(model::tile_book_text(survey_tile_book(128, 128, 32, 1)), text);
  EXPECT_NE(survey_tile_book(128, 128, 32, 2).ground, book_128().ground);

  const fs::path dir = fs::temp_directory_path() / ("wc_tile_survey_" + std::to_string(::getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir);
  model::write_tile_book((dir / "tilebook.txt").string(), book_128());
  EXPECT_EQ(model::tile_book_text(model::read_tile_book((dir / "tilebook.txt").string())), text);
  fs::remove_all(dir);
}

std::string survey_error(int width, int height, int per_type) {
  try {
    survey_tile_book(width, height, per_type, 1);
  } catch (const Error& e) {
    return e.what();
  }
  return "no error";
}

TEST(TileSurvey, RefusesSizesTheBookCannotHold) {
  EXPECT_THAT(survey_error(128, 128, 0), HasSubstr("--per-type: must be in [1, 4096], got 0"));
  EXPECT_THAT(survey_error(128, 128, 4097), HasSubstr("--per-type"));
  EXPECT_THAT(survey_error(100, 128, 1), HasSubstr("--frame: each side must be a multiple of 16"));
  EXPECT_THAT(survey_error(128, 4096, 1), HasSubstr("got 128x4096"));
  EXPECT_THAT(survey_error(64, 128, 1), HasSubstr("the width must be at least 80"));
}

}  // namespace
}  // namespace wc::train
