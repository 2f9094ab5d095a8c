// The training data's patches (the token codebook's survey): counts and cells of a hand-made
// survey, the screen-fixed cells found from the data alone, and every patch of the game's own
// frames in the book.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <random>
#include <set>

#include "engine/core/error.h"
#include "engine/game/game.h"
#include "engine/train/clip_stream.h"
#include "engine/train/palette_survey.h"
#include "engine/train/patch_survey.h"

namespace wc::train {
namespace {

using ::testing::HasSubstr;

template <typename Fn>
std::string wc_error_of(Fn&& fn) {
  try {
    fn();
  } catch (const Error& error) {
    return error.what();
  }
  return "no error";
}

const std::vector<std::array<uint8_t, 3>> kTwoColours = {{0, 0, 0}, {255, 255, 255}};

// A 4x2-pixel frame of two 2x2 cells; `left` and `right` are each cell's 4 pixels (0 black, 1
// white), row by row.
void add_frame(std::vector<uint8_t>& frames, const std::vector<int>& left,
               const std::vector<int>& right) {
  for (int y = 0; y < 2; ++y) {
    for (int x = 0; x < 4; ++x) {
      const int v = x < 2 ? left[y * 2 + x] : right[y * 2 + x - 2];
      for (int c = 0; c < 3; ++c) frames.push_back(v ? 255 : 0);
    }
  }
}

TEST(PatchSurvey, CountsPatchesMostCommonFirstAndBindsScreenFixedOnes) {
  // The right cell always shows one of two "sprite" patches; the left scrolls through others,
  // the first of which (all black) also stands on the right once.
  std::vector<uint8_t> frames;
  add_frame(frames, {0, 0, 0, 0}, {1, 0, 0, 1});
  add_frame(frames, {1, 1, 1, 1}, {1, 0, 0, 1});
  add_frame(frames, {0, 0, 0, 0}, {0, 1, 1, 0});
  add_frame(frames, {1, 1, 0, 0}, {1, 0, 0, 1});
  add_frame(frames, {0, 0, 1, 1}, {0, 0, 0, 0});
  const PatchSurvey survey = survey_patches(frames, 5, 4, 2, kTwoColours, 2, 100, 1);
  EXPECT_EQ(survey.occurrences, 10);
  EXPECT_EQ(survey.distinct, 6);
  ASSERT_EQ(survey.book.patches.size(), 6u);
  // Most common first: all black (3), the first sprite (3), then one each in letter order.
  EXPECT_EQ(survey.book.patches[0], (std::vector<uint8_t>{0, 0, 0, 0}));
  EXPECT_EQ(survey.book.patches[1], (std::vector<uint8_t>{1, 0, 0, 1}));
  EXPECT_EQ(survey.counts[0], 3);
  EXPECT_EQ(survey.counts[1], 3);
  EXPECT_EQ(survey.book.patches[2], (std::vector<uint8_t>{0, 0, 1, 1}));
  EXPECT_DOUBLE_EQ(survey.book_share, 1.0);
  // Every patch here is seen in at most two cells: both cells count as screen-fixed, and every
  // patch is bound to the cells it was seen in.
  EXPECT_EQ(survey.fixed_cells, (std::vector<int>{0, 1}));
  EXPECT_EQ(survey.book.cells[0], (std::vector<int>{0, 1}));
  EXPECT_EQ(survey.book.cells[1], (std::vector<int>{1}));
  EXPECT_EQ(survey.bound_patches, 6);
  // The book keeps the most common; a minimum count drops the rare.
  EXPECT_EQ(survey_patches(frames, 5, 4, 2, kTwoColours, 2, 2, 1).book.patches.size(), 2u);
  const PatchSurvey common = survey_patches(frames, 5, 4, 2, kTwoColours, 2, 100, 2);
  EXPECT_EQ(common.book.patches.size(), 2u);
  EXPECT_DOUBLE_EQ(common.book_share, 0.6);
}

TEST(PatchSurvey, RefusesWhatTheBookCannotHold) {
  const std::vector<uint8_t> frames(4 * 2 * 3, 0);
  const auto error = [&](int size, int max_patches, size_t colours) {
    return wc_error_of([&] {
      survey_patches(frames, 1, 4, 2, std::vector<std::array<uint8_t, 3>>(colours), size,
                     max_patches, 1);
    });
  };
  EXPECT_THAT(error(3, 10, 2), HasSubstr("--size"));
  EXPECT_THAT(error(0, 10, 2), HasSubstr("--size: must be in [1, 32]"));
  EXPECT_THAT(error(2, 0, 2), HasSubstr("--max-patches"));
  EXPECT_THAT(error(2, 10, 65), HasSubstr("1 to 64 colours"));
  EXPECT_THAT(wc_error_of([&] { survey_patches(frames, 2, 4, 2, kTwoColours, 2, 10, 1); }),
              HasSubstr("expected 2 frames of 4x2 RGB bytes"));
}

// The reference game's clips: the sprite's cells are found screen-fixed from the data alone, the
// world's are not, and a book of everything seen holds every patch of the surveyed frames.
TEST(PatchSurvey, FindsTheSpriteAndHoldsEveryPatchOfTheGamesFrames) {
  ClipSpec spec;
  spec.frames = 8;
  const uint64_t seed = std::random_device{}();  // fresh random clips
  const std::vector<Rgb> palette = survey_palette(spec, 16, seed, 4, 64).colours;
  const PatchSurvey survey = survey_clip_patches(spec, 16, seed, 4, palette, 8, 1 << 20, 1);
  EXPECT_DOUBLE_EQ(survey.book_share, 1.0);
  EXPECT_DOUBLE_EQ(survey.unmatched_pixels, 0.0);
  // The player sprite's 16x16 pixels are four 8x8 cells of the 16x16 grid.
  const PatchBook& book = survey.book;
  for (const game::PixelRect& rect : game::screen_overlays(spec.width, spec.height)) {
    if (rect.x % 8 != 0 || rect.y % 8 != 0 || rect.width % 8 != 0 || rect.height % 8 != 0) continue;
    for (int y = rect.y; y < rect.y + rect.height; y += 8) {
      for (int x = rect.x; x < rect.x + rect.width; x += 8) {
        const int cell = (y / 8) * book.grid_w() + x / 8;
        EXPECT_THAT(survey.fixed_cells, ::testing::Contains(cell))
            << "cell " << y / 8 << "." << x / 8;
      }
    }
  }
  EXPECT_LT(survey.fixed_cells.size(), 40u);  // the world scrolls: most cells are not fixed
  // Every 8x8 patch of the last surveyed batch, as palette indices, is a book patch.
  const std::set<std::vector<uint8_t>> patches(book.patches.begin(), book.patches.end());
  const at::Tensor bytes = frame_bytes(make_clip_batch(spec, 16, seed, 3));
  const uint8_t* rgb = bytes.data_ptr<uint8_t>();
  const int64_t frames = bytes.size(0) * bytes.size(1), h = spec.height, w = spec.width;
  const auto index_of = [&](const uint8_t* p) {
    for (size_t i = 0; i < palette.size(); ++i) {
      if (palette[i][0] == p[0] && palette[i][1] == p[1] && palette[i][2] == p[2]) {
        return static_cast<uint8_t>(i);
      }
    }
    ADD_FAILURE() << "a colour outside the palette";
    return uint8_t{0};
  };
  int64_t missing = 0;
  for (int64_t f = 0; f < frames; ++f) {
    for (int64_t y0 = 0; y0 < h; y0 += 8) {
      for (int64_t x0 = 0; x0 < w; x0 += 8) {
        std::vector<uint8_t> patch;
        for (int64_t y = y0; y < y0 + 8; ++y) {
          for (int64_t x = x0; x < x0 + 8; ++x) {
            patch.push_back(index_of(rgb + ((f * h + y) * w + x) * 3));
          }
        }
        missing += patches.count(patch) == 0 ? 1 : 0;
      }
    }
  }
  EXPECT_EQ(missing, 0) << "patches of the surveyed frames missing from the book";
}

}  // namespace
}  // namespace wc::train
