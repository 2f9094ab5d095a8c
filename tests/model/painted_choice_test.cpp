// Note [Painted pixels]: with paint colours after the five moves, the mix, the argmax and the
// drawn choice against a per-pixel loop on fresh random inputs; drawn choices follow the softmax
// and come from the noise alone (Note [Choice draw]); the velocity at full noise with a sure paint
// is that colour; a paint count that disagrees with the logits is refused.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include "engine/model/prediction.h"
#include "tests/model/model_test_util.h"

namespace wc::model {
namespace {

constexpr int kMoves = PredictionConfig::kMoves;

// Choice j's value at a pixel: the previous frame moved (j < 5, the border repeated) or paint
// colour j − 5.
float choice_value(const at::TensorAccessor<float, 5>& prev,
                   const at::TensorAccessor<float, 2>& paint, int b, int f, int ch, int row,
                   int col, int j, int m, int h, int w) {
  if (j >= kMoves) return paint[j - kMoves][ch];
  const int offsets[kMoves][2] = {{0, 0}, {-m, 0}, {m, 0}, {0, -m}, {0, m}};
  const int r = std::clamp(row + offsets[j][0], 0, h - 1);
  const int c = std::clamp(col + offsets[j][1], 0, w - 1);
  return prev[b][f][ch][r][c];
}

struct Case {
  at::Tensor previous, logits, paint, draw;
};

Case fresh_case(int colours, int h, int w) {
  Case c;
  c.previous = at::rand({2, 2, 3, h, w}) * 2 - 1;
  c.logits = at::randn({2, 2, kMoves + colours, h, w}) * 2;
  c.paint = at::rand({colours, 3}) * 2 - 1;
  c.draw = choice_draw(at::randn({2, 2, 3, h, w}));
  return c;
}

TEST(PaintedChoice, MixArgmaxAndDrawMatchAPerPixelLoop) {
  at::manual_seed(41);  // fresh random inputs
  const int h = 6, w = 7, m = 2, k = 4;
  const Case c = fresh_case(k, h, w);
  const ChoiceInputs inputs{c.paint, c.draw};
  const at::Tensor mixed = moved_reference(c.previous, c.logits, m, MoveChoice::kMix, inputs);
  const at::Tensor sharp = moved_reference(c.previous, c.logits, m, MoveChoice::kSharpest, inputs);
  const at::Tensor drawn = moved_reference(c.previous, c.logits, m, MoveChoice::kSample, inputs);
  auto prev = c.previous.accessor<float, 5>();
  auto paint = c.paint.accessor<float, 2>();
  auto l = c.logits.accessor<float, 5>();
  auto u = c.draw.accessor<float, 5>();
  int painted_draws = 0, moved_draws = 0;
  for (int b = 0; b < 2; ++b)
    for (int f = 0; f < 2; ++f)
      for (int row = 0; row < h; ++row)
        for (int col = 0; col < w; ++col) {
          std::vector<double> p(kMoves + k);
          double total = 0.0;
          for (int j = 0; j < kMoves + k; ++j)
            total += p[j] = std::exp(double(l[b][f][j][row][col]));
          int best = 0, best_move = 0;
          double paint_total = 0.0;
          for (int j = 0; j < kMoves + k; ++j) {
            p[j] /= total;
            if (l[b][f][j][row][col] > l[b][f][best][row][col]) best = j;
            if (j < kMoves && l[b][f][j][row][col] > l[b][f][best_move][row][col]) best_move = j;
            if (j >= kMoves) paint_total += p[j];
          }
          // Note [Painted pixels]: painted with the paints' total, a paint drawn among them.
          int picked = best_move;
          if (u[b][f][0][row][col] < paint_total) {
            double cumulative = 0.0;
            picked = kMoves + k - 1;
            for (int j = kMoves; j < kMoves + k; ++j) {
              cumulative += p[j];
              if (cumulative >= u[b][f][1][row][col] * paint_total) {
                picked = j;
                break;
              }
            }
          }
          painted_draws += picked >= kMoves;
          moved_draws += picked < kMoves;
          for (int ch = 0; ch < 3; ++ch) {
            double expected = 0.0;
            for (int j = 0; j < kMoves + k; ++j)
              expected += p[j] * choice_value(prev, paint, b, f, ch, row, col, j, m, h, w);
            ASSERT_NEAR(mixed[b][f][ch][row][col].item<double>(), expected, 1e-5);
            ASSERT_EQ(sharp[b][f][ch][row][col].item<float>(),
                      choice_value(prev, paint, b, f, ch, row, col, best, m, h, w));
            ASSERT_EQ(drawn[b][f][ch][row][col].item<float>(),
                      choice_value(prev, paint, b, f, ch, row, col, picked, m, h, w))
                << "pixel " << row << "," << col;
          }
        }
  EXPECT_GT(painted_draws, 0);  // the case exercises both kinds of choice
  EXPECT_GT(moved_draws, 0);
}

// Share of `index` equal to each of `expected`'s choices, within five standard errors.
void expect_shares(const at::Tensor& index, const std::vector<double>& expected) {
  const double n = static_cast<double>(index.numel());
  for (size_t j = 0; j < expected.size(); ++j) {
    const double share = (index == static_cast<int64_t>(j)).sum().item<double>() / n;
    const double p = expected[j];
    EXPECT_NEAR(share, p, 5.0 * std::sqrt(p * (1 - p) / n) + 1e-12) << "choice " << j;
  }
}

// Over many pixels with the same logits, each paint is drawn as often as its probability and the
// likeliest move takes the rest (the other moves never); the draws are a function of the noise.
TEST(PaintedChoice, DrawsFollowTheSoftmaxAndTheNoise) {
  at::manual_seed(42);
  const int h = 64, w = 64;
  const at::Tensor row_logits = at::tensor({1.0f, -1.0f, 0.0f, -2.0f, 0.5f, 2.0f, -0.5f});
  const at::Tensor logits = row_logits.view({1, 1, -1, 1, 1}).expand({4, 1, -1, h, w});
  const at::Tensor noise = at::randn({4, 1, 3, h, w});
  const at::Tensor index = choice_index(logits, MoveChoice::kSample, choice_draw(noise));
  EXPECT_TRUE(at::equal(index, choice_index(logits, MoveChoice::kSample, choice_draw(noise))));
  const at::Tensor p = at::softmax(row_logits, 0);
  const double paint_0 = p[5].item<double>(), paint_1 = p[6].item<double>();
  expect_shares(index, {1.0 - paint_0 - paint_1, 0, 0, 0, 0, paint_0, paint_1});
  const at::Tensor other =
      choice_index(logits, MoveChoice::kSample, choice_draw(at::randn_like(noise)));
  EXPECT_FALSE(at::equal(index, other));
  // Without paint choices a draw is the likeliest move.
  EXPECT_TRUE(
      at::equal(choice_index(logits.slice(2, 0, kMoves), MoveChoice::kSample, choice_draw(noise)),
                logits.slice(2, 0, kMoves).argmax(2)));
}

// Note [Choice temperature]: the shaped logits against a loop; draws from them follow the
// sharpened softmax and never take a choice under the floor, however many pixels draw.
TEST(PaintedChoice, ShapedDrawsAreSharperAndNeverTakeAChoiceUnderTheFloor) {
  at::manual_seed(44);
  const at::Tensor logits = at::randn({2, 1, kMoves + 3, 5, 6}) * 2;
  const double temperature = 0.5, floor = 0.2;
  const at::Tensor shaped = shaped_logits(logits, temperature, floor);
  for (int b = 0; b < 2; ++b)
    for (int row = 0; row < 5; ++row)
      for (int col = 0; col < 6; ++col) {
        double best = -1e30;
        for (int j = 0; j < kMoves + 3; ++j)
          best = std::max(best, logits[b][0][j][row][col].item<double>() / temperature);
        for (int j = 0; j < kMoves + 3; ++j) {
          const double l = logits[b][0][j][row][col].item<double>() / temperature;
          const double got = shaped[b][0][j][row][col].item<double>();
          if (std::exp(l - best) < floor) {
            ASSERT_TRUE(std::isinf(got) && got < 0) << j;
          } else {
            ASSERT_NEAR(got, l, 1e-5) << j;
          }
        }
      }
  EXPECT_TRUE(at::equal(shaped_logits(logits, 1.0, 0.0), logits));

  // One pixel's logits drawn 16 384 times, at temperature 0.5 and floor 0.05: the paint at 1.5
  // stays, the one at 0.49 is just under the floor (e^{2·(0.49 − 2)} < 0.05), the one at −1 far.
  const at::Tensor row_logits = at::tensor({2.0f, 1.0f, 0.0f, -3.0f, -3.0f, 1.5f, 0.49f, -1.0f});
  const at::Tensor many = row_logits.view({1, 1, -1, 1, 1}).expand({4, 1, -1, 64, 64});
  const at::Tensor index = choice_index(shaped_logits(many, 0.5, 0.05), MoveChoice::kSample,
                                        choice_draw(at::randn({4, 1, 3, 64, 64})));
  at::Tensor kept = row_logits / 0.5;
  kept[6] = kept[7] = -std::numeric_limits<float>::infinity();  // 0.49: just under the floor
  const at::Tensor p = at::softmax(kept, 0);
  expect_shares(index, {1.0 - p[5].item<double>(), 0, 0, 0, 0, p[5].item<double>(), 0, 0});
}

// A paint draw of exactly 1 lands on the last paint left in, not on one left out.
TEST(PaintedChoice, ADrawOfOneTakesTheLastPaintLeftIn) {
  const at::Tensor logits = at::tensor({-50.0f, -50.0f, -50.0f, -50.0f, -50.0f, 0.0f, 3.0f, -50.0f})
                                .view({1, 1, 8, 1, 1});
  const at::Tensor draw = at::tensor({0.0f, 1.0f}).view({1, 1, 2, 1, 1});
  const at::Tensor index =
      choice_index(shaped_logits(logits, 1.0, 0.01), MoveChoice::kSample, draw);
  EXPECT_EQ(index.item<int64_t>(), 6);
}

// Note [Choice draw]: per patch, every pixel of a cell has its cell's first pixel's uniforms.
TEST(PaintedChoice, APatchDrawIsItsFirstPixelsDrawOverTheCell) {
  at::manual_seed(45);
  const at::Tensor noise = at::randn({2, 1, 3, 8, 12});
  const at::Tensor pixel = choice_draw(noise);
  const at::Tensor patch = choice_draw(noise, 4, 3);
  ASSERT_EQ(patch.sizes(), at::IntArrayRef({2, 1, 2, 8, 12}));
  for (int b = 0; b < 2; ++b)
    for (int k = 0; k < 2; ++k)
      for (int row = 0; row < 8; ++row)
        for (int col = 0; col < 12; ++col)
          ASSERT_EQ(patch[b][0][k][row][col].item<float>(),
                    pixel[b][0][k][row / 4 * 4][col / 3 * 3].item<float>());
  EXPECT_THAT(testing::error_of([&] { choice_draw(noise, 3, 3); }),
              ::testing::HasSubstr("cells must tile the frame"));
}

// At full noise a zero correction and a sure paint give that colour everywhere.
TEST(PaintedChoice, ASurePaintAtFullNoiseIsItsColour) {
  at::manual_seed(43);
  PredictionConfig p;
  p.previous_frame_skip = true;
  p.spread = 0.5;
  p.move_pixels = 2;
  p.paint_colours = 3;
  p.move_choice = MoveChoice::kSample;
  const at::Tensor x_t = at::randn({1, 1, 3, 8, 8});
  const at::Tensor previous = at::rand({1, 1, 3, 8, 8}) * 2 - 1;
  const at::Tensor paint = at::rand({3, 3}) * 2 - 1;
  const at::Tensor t = at::ones({1, 1});
  for (int k = 0; k < 3; ++k) {
    at::Tensor output = at::zeros({1, 1, 3 + kMoves + 3, 8, 8});
    output.select(2, 3 + kMoves + k).fill_(30.0);
    const at::Tensor v =
        velocity_from_output(p, output, x_t, t, previous, {paint, choice_draw(x_t)});
    const at::Tensor x0 = x_t - v;
    EXPECT_TRUE(at::allclose(x0, paint[k].view({1, 1, 3, 1, 1}).expand_as(x0), 1e-5, 1e-5))
        << "colour " << k;
  }
}

TEST(PaintedChoice, RefusesPaintThatDisagreesWithTheLogitsAndADrawThatIsMissing) {
  const at::Tensor previous = at::zeros({1, 1, 3, 4, 4});
  const at::Tensor logits = at::zeros({1, 1, kMoves + 2, 4, 4});
  EXPECT_THAT(testing::error_of([&] { moved_reference(previous, logits, 1); }),
              ::testing::HasSubstr("2 paint choices but 0 paint colours"));
  EXPECT_THAT(testing::error_of([&] {
                moved_reference(previous, logits, 1, MoveChoice::kSample,
                                {at::zeros({2, 3}), at::Tensor()});
              }),
              ::testing::HasSubstr("needs each pixel's draw"));
}

}  // namespace
}  // namespace wc::model
