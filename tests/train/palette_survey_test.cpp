// The training data's palette (the token codebook's colours): exact counts when the colours fit,
// k-means centres when they do not, and the reference game's clips covered without error.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <random>
#include <set>

#include "engine/core/error.h"
#include "engine/train/clip_stream.h"
#include "engine/train/palette_survey.h"

namespace wc::train {
namespace {

using ::testing::HasSubstr;

std::vector<uint8_t> pixels_of(const std::vector<std::pair<Rgb, int>>& runs) {
  std::vector<uint8_t> out;
  for (const auto& [rgb, count] : runs) {
    for (int i = 0; i < count; ++i) out.insert(out.end(), rgb.begin(), rgb.end());
  }
  return out;
}

TEST(PaletteSurvey, CountsDistinctColoursMostCommonFirst) {
  const PaletteSurvey survey =
      survey_pixels(pixels_of({{{1, 2, 3}, 2}, {{200, 0, 9}, 5}, {{7, 7, 7}, 1}}), 8);
  EXPECT_EQ(survey.pixels, 8);
  EXPECT_EQ(survey.distinct, 3);
  ASSERT_EQ(survey.colours.size(), 3u);
  EXPECT_EQ(survey.colours[0], (Rgb{200, 0, 9}));
  EXPECT_EQ(survey.colours[1], (Rgb{1, 2, 3}));
  EXPECT_EQ(survey.colours[2], (Rgb{7, 7, 7}));
  EXPECT_DOUBLE_EQ(survey.shares[0], 5.0 / 8.0);
  EXPECT_DOUBLE_EQ(survey.rms_error, 0.0);
}

// Two tight clouds of colours, asked for two: the centres are the clouds' weighted means (to the
// byte), and the error is the clouds' spread, not their distance.
TEST(PaletteSurvey, ClustersWhenThereAreTooManyColours) {
  std::mt19937 rng(41);  // fresh random inputs
  std::uniform_int_distribution<int> jitter(-3, 3);
  std::vector<uint8_t> pixels;
  double sum_dark[3] = {0, 0, 0}, sum_light[3] = {0, 0, 0};
  for (int i = 0; i < 600; ++i) {
    const bool dark = i % 3 != 0;
    const int base[3] = {dark ? 20 : 220, dark ? 40 : 200, dark ? 60 : 90};
    for (int c = 0; c < 3; ++c) {
      const int v = base[c] + jitter(rng);
      pixels.push_back(static_cast<uint8_t>(v));
      (dark ? sum_dark : sum_light)[c] += v;
    }
  }
  const PaletteSurvey survey = survey_pixels(pixels, 2);
  EXPECT_GT(survey.distinct, 2);
  ASSERT_EQ(survey.colours.size(), 2u);
  for (int c = 0; c < 3; ++c) {
    EXPECT_NEAR(survey.colours[0][c], sum_dark[c] / 400.0, 0.5) << c;
    EXPECT_NEAR(survey.colours[1][c], sum_light[c] / 200.0, 0.5) << c;
  }
  EXPECT_NEAR(survey.shares[0], 400.0 / 600.0, 1e-12);
  EXPECT_GT(survey.rms_error, 0.5);
  EXPECT_LT(survey.rms_error, 3.0);
}

// The game's clips are flat colours: a palette surveyed from two batches snaps every pixel of a
// later batch to itself.
TEST(PaletteSurvey, CoversTheGamesClips) {
  ClipSpec spec;
  spec.frames = 3;
  spec.width = 64;
  spec.height = 64;
  const PaletteSurvey survey = survey_palette(spec, 4, 7, 2, 64);
  EXPECT_EQ(survey.pixels, 2 * 4 * 3 * 64 * 64);
  EXPECT_EQ(static_cast<int64_t>(survey.colours.size()), survey.distinct);
  EXPECT_GE(survey.colours.size(), 5u);
  EXPECT_DOUBLE_EQ(survey.rms_error, 0.0);
  std::set<Rgb> palette(survey.colours.begin(), survey.colours.end());
  const ClipBatch later = make_clip_batch(spec, 4, 7, 9);
  const at::Tensor bytes =
      later.frames.add(1).mul(127.5).round().to(at::kByte).movedim(2, -1).contiguous();
  const uint8_t* p = bytes.data_ptr<uint8_t>();
  int64_t outside = 0;
  for (int64_t i = 0; i < bytes.numel() / 3; ++i) {
    outside += palette.count(Rgb{p[3 * i], p[3 * i + 1], p[3 * i + 2]}) == 0;
  }
  EXPECT_EQ(outside, 0);
}

TEST(PaletteSurvey, RefusesEmptyRequestsNamingTheOption) {
  const auto message = [](const auto& call) {
    try {
      call();
    } catch (const Error& error) {
      return std::string(error.what());
    }
    return std::string("no error");
  };
  EXPECT_THAT(message([] { survey_palette(ClipSpec{}, 1, 1, 0, 8); }), HasSubstr("--batches"));
  EXPECT_THAT(message([] { survey_pixels({1, 2, 3}, 0); }), HasSubstr("--max-colours"));
}

}  // namespace
}  // namespace wc::train
