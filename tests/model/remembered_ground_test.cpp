// Note [Remembered ground]: a reference with a ring of remembered ground around the frame. With
// nothing remembered it plays exactly as the plain reference; on fresh random moves, frames and
// rings, a pixel whose likeliest move reads a remembered ring pixel takes it as it is (no paint,
// no correction), one that reads an unknown one is painted, and every other pixel is what the
// plain reference gives it (a per-pixel loop is the reference); bad sizes and choices that are
// not new ground are refused.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>

#include "engine/model/prediction.h"
#include "tests/model/model_test_util.h"

namespace wc::model {
namespace {

using ::testing::HasSubstr;

constexpr int kMoves = PredictionConfig::kMoves;
constexpr int kRowStep[kMoves] = {0, -1, 1, 0, 0};  // Note [Moved reference]'s offsets
constexpr int kColStep[kMoves] = {0, 0, 0, -1, 1};
constexpr int kColours = 3;

PredictionConfig new_ground(int m) {
  PredictionConfig prediction;
  prediction.previous_frame_skip = true;
  prediction.move_pixels = m;
  prediction.paint_colours = kColours;
  prediction.move_choice = MoveChoice::kNewGround;
  return prediction;
}

// Logits whose likeliest moves are patchy, mostly each frame's scroll, so many pixels read past
// the border.
at::Tensor patchy_logits(int h, int w) {
  at::Tensor logits = at::randn({2, 3, kMoves + kColours, h, w});
  const at::Tensor lead = at::randint(kMoves, {2, 3, 1, h, w}, at::kLong);
  const at::Tensor scroll = at::randint(1, kMoves, {2, 3, 1, 1, 1}, at::kLong).expand_as(lead);
  const at::Tensor move = at::where(at::rand({2, 3, 1, h, w}) < 0.6, scroll, lead);
  logits.slice(2, 0, kMoves).scatter_add_(2, move, at::full_like(move, 6.0, at::kFloat));
  return logits;
}

// `previous` ([B, F, C, H, W]) in the middle of a ring of random ground, NaN where `known_share`
// of a draw says nothing is remembered (all channels of a pixel together).
at::Tensor remembered(const at::Tensor& previous, int m, double known_share) {
  const int64_t h = previous.size(3), w = previous.size(4);
  at::Tensor out = at::rand({previous.size(0), previous.size(1), 3, h + 2 * m, w + 2 * m}) * 2 - 1;
  const at::Tensor unknown =
      (at::rand({previous.size(0), previous.size(1), 1, h + 2 * m, w + 2 * m}) >= known_share)
          .expand_as(out);
  out.masked_fill_(unknown, std::numeric_limits<float>::quiet_NaN());
  out.slice(3, m, m + h).slice(4, m, m + w).copy_(previous);
  return out;
}

TEST(RememberedGround, WithNothingRememberedItPlaysAsThePlainReference) {
  at::manual_seed(71);
  const int h = 8, w = 10, m = 2;
  const at::Tensor previous = at::rand({2, 3, 3, h, w}) * 2 - 1;
  const at::Tensor output = at::cat({at::randn({2, 3, 3, h, w}), patchy_logits(h, w)}, 2);
  const at::Tensor x_t = at::randn({2, 3, 3, h, w});
  const at::Tensor t = at::rand({2, 3});
  const ChoiceInputs choice{at::rand({kColours, 3}) * 2 - 1, choice_draw(x_t)};
  const at::Tensor plain = velocity_from_output(new_ground(m), output, x_t, t, previous, choice);
  const at::Tensor ring = remembered(previous, m, 0.0);
  EXPECT_TRUE(at::equal(velocity_from_output(new_ground(m), output, x_t, t, ring, choice), plain));
}

TEST(RememberedGround, ARememberedSourceIsTakenAsItIsAgainstAPerPixelLoop) {
  at::manual_seed(72);  // fresh random inputs
  int read_from_ring = 0, painted = 0;
  for (const int m : {1, 2, 3}) {
    const int h = 9, w = 7;
    const at::Tensor logits = patchy_logits(h, w);
    const at::Tensor output = at::cat({at::randn({2, 3, 3, h, w}), logits}, 2);
    const at::Tensor previous = at::rand({2, 3, 3, h, w}) * 2 - 1;
    const at::Tensor ring = remembered(previous, m, 0.5);
    const at::Tensor x_t = at::randn({2, 3, 3, h, w});
    const ChoiceInputs choice{at::rand({kColours, 3}) * 2 - 1, choice_draw(x_t)};
    for (const bool full_noise : {true, false}) {
      const at::Tensor t = full_noise ? at::ones({2, 3}) : at::rand({2, 3});
      const at::Tensor x0_of = [&] {
        return x_t - velocity_from_output(new_ground(m), output, x_t, t, ring, choice) *
                         t.clamp(1e-3, 1.0).view({2, 3, 1, 1, 1});
      }();
      const at::Tensor plain_x0 =
          x_t - velocity_from_output(new_ground(m), output, x_t, t, previous, choice) *
                    t.clamp(1e-3, 1.0).view({2, 3, 1, 1, 1});
      const at::Tensor likeliest = logits.slice(2, 0, kMoves).argmax(2);
      const at::Tensor index =
          choice_index(logits, MoveChoice::kNewGround, choice.draw, m, {}, known_sources(ring, m));
      auto move = likeliest.accessor<int64_t, 4>();
      auto chosen = index.accessor<int64_t, 4>();
      auto around = ring.accessor<float, 5>();
      auto got = x0_of.accessor<float, 5>();
      auto plain = plain_x0.accessor<float, 5>();
      auto x = x_t.accessor<float, 5>();
      const double spread = new_ground(m).spread;
      for (int b = 0; b < 2; ++b)
        for (int f = 0; f < 3; ++f)
          for (int row = 0; row < h; ++row)
            for (int col = 0; col < w; ++col) {
              const int64_t k = move[b][f][row][col];
              // The source in the ring's coordinates (the frame sits m in).
              const int r = row + m + kRowStep[k] * m, c = col + m + kColStep[k] * m;
              const bool outside = r < m || r >= m + h || c < m || c >= m + w;
              const bool known = !std::isnan(around[b][f][0][r][c]);
              ASSERT_EQ(chosen[b][f][row][col] >= kMoves, outside && !known);
              // Velocity's x̂0 of a reference pixel with no correction (Note [Previous-frame skip]).
              const double level = std::clamp(t[b][f].item<double>(), 1e-3, 1.0), a = 1 - level;
              const double s2 = spread * spread, keep = a * s2 / (a * a * s2 + level * level);
              for (int ch = 0; ch < 3; ++ch) {
                const double remembered_pixel = around[b][f][ch][r][c];
                const double expected =
                    outside && known
                        ? remembered_pixel + keep * (x[b][f][ch][row][col] - a * remembered_pixel)
                        : plain[b][f][ch][row][col];
                ASSERT_NEAR(got[b][f][ch][row][col], expected, 1e-4)
                    << "m " << m << " pixel " << row << "," << col << " move " << k;
              }
              if (full_noise) {
                read_from_ring += outside && known;
                painted += outside && !known;
              }
            }
    }
  }
  EXPECT_GT(read_from_ring, 50);
  EXPECT_GT(painted, 50);
}

TEST(RememberedGround, BadSizesAndOtherChoicesAreRefused) {
  const int h = 8, w = 8, m = 2;
  const at::Tensor output = at::randn({1, 1, 3 + kMoves + kColours, h, w});
  const at::Tensor x_t = at::randn({1, 1, 3, h, w});
  const at::Tensor t = at::ones({1, 1});
  const ChoiceInputs choice{at::rand({kColours, 3}), choice_draw(x_t)};
  const at::Tensor odd = at::zeros({1, 1, 3, h + 1, w + 1});
  EXPECT_THAT(
      testing::error_of([&] { velocity_from_output(new_ground(m), output, x_t, t, odd, choice); }),
      HasSubstr("must be their size, or remembered, 4 larger"));
  const at::Tensor ring = remembered(at::zeros({1, 1, 3, h, w}), m, 0.5);
  PredictionConfig sharpest = new_ground(m);
  sharpest.move_choice = MoveChoice::kSharpest;
  EXPECT_THAT(testing::error_of([&] {
                velocity_from_output(sharpest, output.slice(2, 0, 3 + kMoves), x_t, t, ring,
                                     choice);
              }),
              HasSubstr("remembered ground needs move_choice \"new_ground\""));
  PredictionConfig uncovered = new_ground(m);
  uncovered.uncovered_ground = true;
  EXPECT_THAT(
      testing::error_of([&] { velocity_from_output(uncovered, output, x_t, t, ring, choice); }),
      HasSubstr("do not combine"));
}

}  // namespace
}  // namespace wc::model
