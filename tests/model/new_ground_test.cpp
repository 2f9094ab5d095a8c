// Note [New ground]: the pixels a scroll brings in, the choice there and elsewhere, and the
// velocity without the correction where a pixel is painted, each against a per-pixel loop on
// fresh random inputs; the paints' draw follows their own softmax, shaped among themselves.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <vector>

#include "engine/model/prediction.h"
#include "tests/model/model_test_util.h"

namespace wc::model {
namespace {

constexpr int kMoves = PredictionConfig::kMoves;

// Whether move j takes pixel (row, col) of an h x w frame from past its border (Note [Moved
// reference]'s offsets, m pixels).
bool reaches_out(int j, int row, int col, int m, int h, int w) {
  const int offsets[kMoves][2] = {{0, 0}, {-m, 0}, {m, 0}, {0, -m}, {0, m}};
  const int r = row + offsets[j][0], c = col + offsets[j][1];
  return r < 0 || r >= h || c < 0 || c >= w;
}

// The likeliest of the five moves at one pixel of `l` (ties to the first).
int likeliest_move(const at::TensorAccessor<float, 5>& l, int b, int f, int row, int col) {
  int best = 0;
  for (int j = 1; j < kMoves; ++j)
    if (l[b][f][j][row][col] > l[b][f][best][row][col]) best = j;
  return best;
}

// Logits whose likeliest move is, per frame, a different one (so every edge's strip is new
// ground in some frame), with random logits around it.
at::Tensor fresh_logits(int colours, int h, int w) {
  at::Tensor logits = at::randn({2, 3, kMoves + colours, h, w}) * 2;
  const int likeliest[2][3] = {{1, 2, 0}, {3, 4, 1}};
  for (int b = 0; b < 2; ++b)
    for (int f = 0; f < 3; ++f) {
      // Most pixels take the frame's move, a random fifth keep their own.
      const at::Tensor lead = (at::rand({h, w}) < 0.8).to(at::kFloat) * 8.0;
      logits[b][f][likeliest[b][f]] += lead;
    }
  return logits;
}

TEST(NewGround, ThePixelsWhoseLikeliestMoveReachesPastTheBorder) {
  at::manual_seed(51);  // fresh random inputs
  const int h = 9, w = 7, m = 2;
  const at::Tensor logits = fresh_logits(3, h, w);
  const at::Tensor fresh = new_ground_pixels(logits, m);
  ASSERT_EQ(fresh.sizes(), at::IntArrayRef({2, 3, h, w}));
  auto l = logits.accessor<float, 5>();
  int counted = 0;
  for (int b = 0; b < 2; ++b)
    for (int f = 0; f < 3; ++f)
      for (int row = 0; row < h; ++row)
        for (int col = 0; col < w; ++col) {
          const int best = likeliest_move(l, b, f, row, col);
          const bool expected = reaches_out(best, row, col, m, h, w);
          ASSERT_EQ(fresh[b][f][row][col].item<bool>(), expected) << row << "," << col;
          counted += expected;
        }
  EXPECT_GT(counted, 0);
}

// Each pixel's choice and the reference it makes: the likeliest move, and on new ground a paint
// drawn by inverse CDF of the paints' own softmax.
TEST(NewGround, TheChoiceMatchesAPerPixelLoop) {
  at::manual_seed(52);
  const int h = 8, w = 6, m = 2, k = 4;
  const at::Tensor logits = fresh_logits(k, h, w);
  const at::Tensor previous = at::rand({2, 3, 3, h, w}) * 2 - 1;
  const at::Tensor paint = at::rand({k, 3}) * 2 - 1;
  const at::Tensor draw = choice_draw(at::randn({2, 3, 3, h, w}));
  const at::Tensor index = choice_index(logits, MoveChoice::kNewGround, draw, m);
  const at::Tensor reference =
      moved_reference(previous, logits, m, MoveChoice::kNewGround, {paint, draw});
  auto l = logits.accessor<float, 5>();
  auto u = draw.accessor<float, 5>();
  auto prev = previous.accessor<float, 5>();
  int painted = 0;
  for (int b = 0; b < 2; ++b)
    for (int f = 0; f < 3; ++f)
      for (int row = 0; row < h; ++row)
        for (int col = 0; col < w; ++col) {
          const int best = likeliest_move(l, b, f, row, col);
          int expected = best;
          if (reaches_out(best, row, col, m, h, w)) {
            std::vector<double> p(k);
            double total = 0.0;
            for (int j = 0; j < k; ++j)
              total += p[j] = std::exp(double(l[b][f][kMoves + j][row][col]));
            double cumulative = 0.0;
            expected = kMoves + k - 1;
            for (int j = 0; j < k; ++j) {
              cumulative += p[j] / total;
              if (cumulative >= u[b][f][1][row][col]) {
                expected = kMoves + j;
                break;
              }
            }
            ++painted;
          }
          ASSERT_EQ(index[b][f][row][col].item<int64_t>(), expected) << row << "," << col;
          const int offsets[kMoves][2] = {{0, 0}, {-m, 0}, {m, 0}, {0, -m}, {0, m}};
          for (int ch = 0; ch < 3; ++ch) {
            const float value =
                expected >= kMoves
                    ? paint[expected - kMoves][ch].item<float>()
                    : prev[b][f][ch][std::clamp(row + offsets[expected][0], 0, h - 1)]
                          [std::clamp(col + offsets[expected][1], 0, w - 1)];
            ASSERT_EQ(reference[b][f][ch][row][col].item<float>(), value);
          }
        }
  EXPECT_GT(painted, 0);
  // Where no move reaches out (every pixel "as it is": a still frame) nothing is painted.
  at::Tensor still = logits.clone();
  still.select(2, 0).fill_(100.0);
  EXPECT_TRUE(at::equal(choice_index(still, MoveChoice::kNewGround, draw, m),
                        at::zeros({2, 3, h, w}, at::kLong)));
}

// Over many new-ground pixels with the same logits, each paint is drawn as often as its share of
// the paints' own softmax, however likely the moves are, and the floor counts among the paints.
TEST(NewGround, PaintsAreDrawnFromTheirOwnSoftmaxShapedAmongThemselves) {
  at::manual_seed(53);
  // The likeliest move is the one from below (2): the bottom 4 rows of 64 are new ground.
  const at::Tensor row_logits =
      at::tensor({0.0f, -1.0f, 9.0f, -2.0f, 0.5f, 1.0f, 0.0f, -1.0f, -0.5f});
  const int h = 4, w = 64, m = 4;
  const at::Tensor logits = row_logits.view({1, 1, -1, 1, 1}).expand({16, 1, -1, h, w});
  const at::Tensor draw = choice_draw(at::randn({16, 1, 3, h, w}));
  const at::Tensor index = choice_index(logits, MoveChoice::kNewGround, draw, m);
  const at::Tensor p = at::softmax(row_logits.slice(0, kMoves), 0);
  const double n = static_cast<double>(index.numel());
  for (int j = 0; j < 4; ++j) {
    const double share = (index == kMoves + j).sum().item<double>() / n;
    const double q = p[j].item<double>();
    EXPECT_NEAR(share, q, 5.0 * std::sqrt(q * (1 - q) / n)) << "paint " << j;
  }
  // The velocity's shaping (Note [Choice temperature]) among the paints: with a floor of 0.3 the
  // paints at −1 and −0.5 (e^{−1.5} < 0.3 of the likeliest paint, at 1) are never drawn, the one
  // at 0 (e^{−1} > 0.3) is, while the moves, far likelier than any paint, leave none out.
  PredictionConfig prediction;
  prediction.previous_frame_skip = true;
  prediction.move_pixels = m;
  prediction.paint_colours = 4;
  prediction.move_choice = MoveChoice::kNewGround;
  prediction.choice_floor = 0.3;
  const at::Tensor paint = at::eye(4).slice(1, 0, 3) * 2 - 1;  // four distinct colours
  at::Tensor output = at::zeros({16, 1, 3 + kMoves + 4, h, w});
  output.slice(2, 3) = logits;
  const at::Tensor x_t = at::randn({16, 1, 3, h, w});
  const at::Tensor x0 = x_t - velocity_from_output(prediction, output, x_t, at::ones({16, 1}),
                                                   at::zeros_like(x_t), {paint, draw});
  for (int j = 0; j < 4; ++j) {
    const at::Tensor is_j = (x0 - paint[j].view({1, 1, 3, 1, 1})).abs().amax(2) < 1e-4;
    const double share = is_j.sum().item<double>() / n;
    if (j == 2 || j == 3) {
      EXPECT_EQ(share, 0.0) << "paint " << j << " is under the floor";
    } else {
      EXPECT_GT(share, 0.2) << "paint " << j;  // 0.73 and 0.27 of the paints left in
    }
  }
}

// The velocity: each pixel's reference is its choice, and a painted pixel's correction is left
// out, so its estimate x̂0 is the paint's posterior mean alone (the colour at full noise).
TEST(NewGround, APaintedPixelIsItsColourWithoutTheCorrection) {
  at::manual_seed(54);
  const int h = 8, w = 8, m = 2, k = 3;
  PredictionConfig prediction;
  prediction.previous_frame_skip = true;
  prediction.spread = 0.5;
  prediction.move_pixels = m;
  prediction.paint_colours = k;
  prediction.move_choice = MoveChoice::kNewGround;
  const at::Tensor logits = fresh_logits(k, h, w);
  const at::Tensor correction = at::randn({2, 3, 3, h, w});
  const at::Tensor output = at::cat({correction, logits}, 2);
  const at::Tensor previous = at::rand({2, 3, 3, h, w}) * 2 - 1;
  const at::Tensor paint = at::rand({k, 3}) * 2 - 1;
  const at::Tensor x_t = at::randn({2, 3, 3, h, w});
  const at::Tensor draw = choice_draw(x_t);
  const at::Tensor t = at::rand({2, 3}) * 0.9 + 0.1;
  const at::Tensor v = velocity_from_output(prediction, output, x_t, t, previous, {paint, draw});
  const at::Tensor r = moved_reference(previous, logits, m, MoveChoice::kNewGround, {paint, draw});
  const at::Tensor kept =
      (choice_index(logits, MoveChoice::kNewGround, draw, m) < kMoves).unsqueeze(2);
  const double s = prediction.spread;
  const at::Tensor level = t.view({2, 3, 1, 1, 1});
  const at::Tensor a = 1 - level, d = a * a * s * s + level * level;
  const at::Tensor x0 =
      r + a * s * s / d * (x_t - a * r) + s * level / d.sqrt() * correction * kept;
  EXPECT_TRUE(at::allclose(v, (x_t - x0) / level, 1e-4, 1e-4));
  EXPECT_FALSE(kept.all().item<bool>());
  // At full noise the painted pixels are their colours.
  const at::Tensor full = x_t - velocity_from_output(prediction, output, x_t, at::ones({2, 3}),
                                                     previous, {paint, draw});
  EXPECT_TRUE(at::allclose(full.masked_select(kept.logical_not()),
                           r.masked_select(kept.logical_not()), 1e-5, 1e-5));
}

}  // namespace
}  // namespace wc::model
