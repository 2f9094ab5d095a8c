// Note [Tile tokens]: the game's frames encode to whole tiles and layers and decode back to the
// same bytes; the ground window fills what the view hides; every token is one its place allows.
#include <gtest/gtest.h>

#include <array>
#include <map>
#include <set>
#include <string>

#include "engine/game/game.h"
#include "engine/model/tile_tokenizer.h"
#include "engine/train/clip_stream.h"
#include "engine/train/tile_survey.h"
#include "engine/train/token_batch.h"
#include "engine/train/training_clip.h"

namespace wc::train {
namespace {

constexpr int kSide = 128;
constexpr int kTile = 16;

// A walk of the exploring agent with its ground windows.
ClipBatch walk(uint64_t seed, int frames) {
  ClipSpec spec;
  spec.frames = frames;
  spec.width = kSide;
  spec.height = kSide;
  spec.contiguous_share = 0.5;
  spec.max_walk = 60;
  spec.ground = true;
  return make_clip_batch(spec, 2, seed, 0);
}

// The survey's book with every tile of `clips`' ground windows added, so that the game's frames
// are made of its entries.
model::TileBook exact_book(const ClipBatch& clips) {
  model::TileBook book = survey_tile_book(kSide, kSide, 2, 5);
  std::map<std::array<uint8_t, 3>, uint8_t> colour_index;
  for (size_t i = 0; i < book.colours.size(); ++i)
    colour_index[book.colours[i]] = static_cast<uint8_t>(i);
  std::set<std::vector<uint8_t>> known(book.ground.begin(), book.ground.end());
  const at::Tensor ground = clips.ground.contiguous();
  const int64_t rows = ground.size(3) / kTile, cols = ground.size(4) / kTile;
  const at::Tensor tiles = ground.view({-1, 3, rows, kTile, cols, kTile})
                               .permute({0, 2, 4, 3, 5, 1})
                               .reshape({-1, kTile * kTile, 3})
                               .contiguous();
  const uint8_t* bytes = tiles.data_ptr<uint8_t>();
  for (int64_t t = 0; t < tiles.size(0); ++t) {
    std::vector<uint8_t> entry(kTile * kTile);
    for (int p = 0; p < kTile * kTile; ++p) {
      const uint8_t* rgb = bytes + (t * kTile * kTile + p) * 3;
      const std::array<uint8_t, 3> colour{rgb[0], rgb[1], rgb[2]};
      auto it = colour_index.find(colour);
      if (it == colour_index.end()) {
        it = colour_index.emplace(colour, static_cast<uint8_t>(book.colours.size())).first;
        book.colours.push_back(colour);
      }
      entry[static_cast<size_t>(p)] = it->second;
    }
    if (known.insert(entry).second) book.ground.push_back(entry);
  }
  return book;
}

at::Tensor as_bytes(const at::Tensor& frames) {
  return ((frames + 1.0) * 127.5).round().to(at::kByte);
}

TEST(TileTokenizer, GameFramesEncodeWholeAndDecodeToTheirBytes) {
  const ClipBatch clips = walk(3, 24);
  const model::TileTokenizer tokenizer(exact_book(clips), at::kCPU);
  at::Tensor misses;
  const at::Tensor tokens = tokenizer.encode(clips.frames, clips.quarters, &misses);
  EXPECT_EQ(tokens.sizes(), (at::IntArrayRef{2, 24, 10, 9}));
  EXPECT_EQ(misses.item<int64_t>(), 0);
  EXPECT_TRUE(as_bytes(tokenizer.decode(tokens, at::kFloat)).equal(as_bytes(clips.frames)));
  EXPECT_TRUE(tokenizer.quarters(tokens).equal(clips.quarters));
  // Each frame's own closest phase draws the same frame.
  const at::Tensor guessed = tokenizer.encode(clips.frames, at::Tensor());
  EXPECT_TRUE(as_bytes(tokenizer.decode(guessed, at::kFloat)).equal(as_bytes(clips.frames)));
}

TEST(TileTokenizer, TheGroundWindowFillsWhatTheViewHides) {
  const ClipBatch clips = walk(8, 16);
  const model::TileTokenizer tokenizer(exact_book(clips), at::kCPU);
  at::Tensor misses;
  const at::Tensor seen = tokenizer.encode(clips.frames, clips.quarters);
  const at::Tensor whole =
      tokenizer.encode_with_ground(clips.frames, clips.quarters, clips.ground, &misses);
  EXPECT_EQ(misses.item<int64_t>(), 0);
  const at::Tensor hidden = seen == tokenizer.mask_id();
  EXPECT_TRUE(hidden.any().item<bool>()) << "a frame at phase 0 hides a column of its window";
  EXPECT_FALSE((whole == tokenizer.mask_id()).any().item<bool>());
  // What the frame shows decodes the same; a tile half shown may fit several entries.
  EXPECT_TRUE(as_bytes(tokenizer.decode(whole, at::kFloat)).equal(as_bytes(clips.frames)));
  // Hidden tiles are the last column or row of a window at phase 0 on that side.
  const at::Tensor q = clips.quarters.view({2, 16, 1, 1});
  const at::Tensor col = at::arange(9).view({1, 1, 1, 9}), row = at::arange(10).view({1, 1, 10, 1});
  const at::Tensor beyond = ((col == 8) & (q % 2 == 0)) | ((row == 8) & (q / 2 == 0));
  EXPECT_TRUE(hidden.equal(beyond & (row < 9)));
}

TEST(TileTokenizer, EveryTokenIsOneItsPlaceAllows) {
  const ClipBatch clips = walk(11, 12);
  const model::TileTokenizer tokenizer(exact_book(clips), at::kCPU);
  const at::Tensor tokens =
      tokenizer.encode_with_ground(clips.frames, clips.quarters, clips.ground).view({-1, 90});
  const at::Tensor allowed = tokenizer.allowed();
  ASSERT_EQ(allowed.sizes(), (at::IntArrayRef{90, tokenizer.vocab()}));
  const at::Tensor place = at::arange(90).view({1, 90}).expand_as(tokens);
  EXPECT_TRUE(allowed.index({place, tokens}).all().item<bool>());
  // Each place allows one kind only: ground, phase, a layer's images, or the pad.
  EXPECT_TRUE(
      allowed.slice(0, 0, 81).slice(1, 0, tokenizer.book().ground_size()).all().item<bool>());
  EXPECT_EQ(allowed[81].sum().item<int64_t>(), 4);
  EXPECT_EQ(allowed[89].sum().item<int64_t>(), 1);
  EXPECT_TRUE(allowed[89][tokenizer.book().pad_id()].item<bool>());
  EXPECT_EQ(tokenizer.scored().sum().item<int64_t>(), 81 + 6);
}

TEST(TileTokenizer, AFrameTheBookCannotDrawCountsItsMisses) {
  const ClipBatch clips = walk(4, 4);
  const model::TileTokenizer tokenizer(exact_book(clips), at::kCPU);
  at::Tensor frames = clips.frames.clone();
  frames[0][1][0][100][100] = 0.123;  // a ground pixel no tile has
  frames[0][2][1][64][64] = 0.5;      // a pixel at the sprite's middle
  at::Tensor misses;
  const at::Tensor tokens = tokenizer.encode(frames, clips.quarters, &misses);
  EXPECT_GE(misses.item<int64_t>(), 2);
  // What decodes is still the game's drawing: whole tiles and a pose.
  const at::Tensor flat = tokens.view({8, 90});
  const at::Tensor hidden = flat == tokenizer.mask_id();
  EXPECT_TRUE(tokenizer.allowed()
                  .index({at::arange(90).view({1, 90}).expand({8, 90}),
                          at::where(hidden, at::zeros_like(flat), flat)})
                  .logical_or(hidden)
                  .all()
                  .item<bool>());
}

TEST(TileStrip, IsTheTilesTheWindowBroughtIn) {
  // A window moving right, then down, then left, then standing.
  const at::Tensor origins = at::tensor({0, 0, 1, 0, 1, 1, 0, 1, 0, 1}, at::kLong).view({1, 5, 2});
  const at::Tensor strip = tile_strip(origins, 9, 9, 10);
  EXPECT_FALSE(strip.select(1, 0).any().item<bool>());
  EXPECT_TRUE(strip[0][1].select(1, 8).slice(0, 0, 9).all().item<bool>());
  EXPECT_EQ(strip[0][1].sum().item<int64_t>(), 9);
  EXPECT_TRUE(strip[0][2][8].all().item<bool>());
  EXPECT_EQ(strip[0][2].sum().item<int64_t>(), 9);
  EXPECT_TRUE(strip[0][3].select(1, 0).slice(0, 0, 9).all().item<bool>());
  EXPECT_FALSE(strip[0][4].any().item<bool>());
}

TEST(TileStrip, ClipOriginsFollowTheCamera) {
  const ClipBatch clips = walk(21, 20);
  // After the sink (a clip may skip a walk there), each frame's window moves at most a tile a
  // step, and only on steps whose phase wraps.
  const at::Tensor origins = clips.origins.slice(1, 1), quarters = clips.quarters.slice(1, 1);
  const at::Tensor step = origins.slice(1, 1) - origins.slice(1, 0, 18);
  EXPECT_TRUE((step.abs() <= 1).all().item<bool>());
  EXPECT_TRUE((step != 0).any().item<bool>());
  const at::Tensor qx = quarters % 2, qy = quarters / 2;
  const at::Tensor moved_x = step.select(2, 0) != 0;
  EXPECT_TRUE((moved_x.logical_not() | (qx.slice(1, 1) != qx.slice(1, 0, 18))).all().item<bool>());
  const at::Tensor moved_y = step.select(2, 1) != 0;
  EXPECT_TRUE((moved_y.logical_not() | (qy.slice(1, 1) != qy.slice(1, 0, 18))).all().item<bool>());
}

}  // namespace
}  // namespace wc::train
