// Note [Uncovered ground]: a pixel that moves is new ground when its source is past the border,
// or stays while it would have shown another colour moved the same way; against a per-pixel loop
// on fresh random moves and frames. It holds the border's new ground, paints nothing in a still
// frame, finds the ground a still sprite uncovers in a scroll and not the grass around it, and
// play's choice and velocity follow the config's flag.
#include <gtest/gtest.h>

#include "engine/model/prediction.h"

namespace wc::model {
namespace {

constexpr int kMoves = PredictionConfig::kMoves;
// Note [Moved reference]'s offsets: the source of a pixel under move j is p + m·(row, col).
constexpr int kRowStep[kMoves] = {0, -1, 1, 0, 0};
constexpr int kColStep[kMoves] = {0, 0, 0, -1, 1};

// Random logits whose likeliest moves are patchy: each pixel leads with one of the five moves,
// mostly its frame's scroll, so sources both agree and disagree.
at::Tensor patchy_logits(int colours, int h, int w) {
  at::Tensor logits = at::randn({2, 3, kMoves + colours, h, w});
  const at::Tensor lead = at::randint(kMoves, {2, 3, 1, h, w}, at::kLong);
  const at::Tensor scroll = at::randint(1, kMoves, {2, 3, 1, 1, 1}, at::kLong).expand_as(lead);
  const at::Tensor move = at::where(at::rand({2, 3, 1, h, w}) < 0.6, scroll, lead);
  logits.slice(2, 0, kMoves).scatter_add_(2, move, at::full_like(move, 6.0, at::kFloat));
  return logits;
}

// A frame of few colours, so that neighbours often match.
at::Tensor few_colours(int h, int w) {
  return at::randint(3, {2, 3, 1, h, w}).to(at::kFloat).expand({-1, -1, 3, -1, -1}) - 1.0;
}

// The per-pixel reading of the rule.
at::Tensor uncovered_by_loop(const at::Tensor& logits, const at::Tensor& previous, int m) {
  const at::Tensor likeliest = logits.slice(2, 0, kMoves).argmax(2);
  auto l = likeliest.accessor<int64_t, 4>();
  auto prev = previous.accessor<float, 5>();
  const int h = static_cast<int>(logits.size(3)), w = static_cast<int>(logits.size(4));
  const auto inside = [&](int r, int c) { return r >= 0 && r < h && c >= 0 && c < w; };
  at::Tensor out = at::zeros_like(likeliest, at::kBool);
  for (int b = 0; b < logits.size(0); ++b)
    for (int f = 0; f < logits.size(1); ++f)
      for (int row = 0; row < h; ++row)
        for (int col = 0; col < w; ++col) {
          const int64_t k = l[b][f][row][col];
          if (k == 0) continue;
          const int r = row + kRowStep[k] * m, c = col + kColStep[k] * m;
          const int r2 = r + kRowStep[k] * m, c2 = c + kColStep[k] * m;
          bool uncovered = !inside(r, c);
          if (!uncovered && l[b][f][r][c] == 0) {
            bool other_colour = !inside(r2, c2);
            for (int ch = 0; ch < 3 && !other_colour; ++ch)
              other_colour = prev[b][f][ch][r][c] != prev[b][f][ch][r2][c2];
            uncovered = other_colour;
          }
          out[b][f][row][col] = uncovered;
        }
  return out;
}

TEST(UncoveredGround, MatchesAPerPixelLoopAndHoldsTheBordersNewGround) {
  at::manual_seed(61);  // fresh random inputs
  int beyond_border = 0;
  for (const int m : {1, 2, 3}) {
    const at::Tensor logits = patchy_logits(3, 9, 7);
    const at::Tensor previous = few_colours(9, 7);
    const at::Tensor uncovered = new_ground_pixels(logits, m, previous);
    EXPECT_TRUE(at::equal(uncovered, uncovered_by_loop(logits, previous, m))) << "m " << m;
    const at::Tensor border = new_ground_pixels(logits, m);
    EXPECT_FALSE((border & uncovered.logical_not()).any().item<bool>()) << "m " << m;
    beyond_border += (uncovered & border.logical_not()).sum().item<int>();
  }
  EXPECT_GT(beyond_border, 0);
}

TEST(UncoveredGround, AStillFrameHasNoneAndAWholeScrollOnlyTheBorderStrip) {
  at::manual_seed(62);
  const int h = 10, w = 12, m = 2;
  at::Tensor logits = at::randn({1, 5, kMoves + 2, h, w});
  for (int j = 0; j < kMoves; ++j) logits[0][j][j] += 20.0;  // frame j: every pixel takes move j
  const at::Tensor uncovered = new_ground_pixels(logits, m, at::rand({1, 5, 3, h, w}));
  EXPECT_FALSE(uncovered[0][0].any().item<bool>());
  EXPECT_TRUE(at::equal(uncovered, new_ground_pixels(logits, m)));
}

// A frame of plain grass that scrolls up (every pixel from below) around a two-toned 4 x 4 sprite
// that stays, with two grass pixels wrongly staying too: the m rows above the sprite read its top
// half, which moved would have shown its bottom half, and are uncovered; the grass above a
// staying grass pixel is not (moved, it would have shown grass), and nothing else is but the
// bottom strip. The sprite's own pixels stay: only pixels that move count.
TEST(UncoveredGround, TheGroundAboveAStillSpriteInAScrollIsNewTheGrassIsNot) {
  const int h = 16, w = 12, m = 2;
  at::Tensor logits = at::zeros({1, 1, kMoves + 2, h, w});
  logits.select(2, 2).fill_(5.0);
  logits.select(2, 0).slice(2, 6, 10).slice(3, 4, 8).fill_(10.0);  // the sprite stays
  logits.select(2, 0).slice(2, 2, 3).slice(3, 1, 3).fill_(10.0);   // two grass pixels stay
  at::Tensor previous = at::zeros({1, 1, 3, h, w});
  previous.slice(3, 6, 8).slice(4, 4, 8).fill_(0.5);
  previous.slice(3, 8, 10).slice(4, 4, 8).fill_(-0.5);
  at::Tensor expected = at::zeros({1, 1, h, w}, at::kBool);
  expected.slice(2, h - m).fill_(true);
  expected.slice(2, 6 - m, 6).slice(3, 4, 8).fill_(true);
  EXPECT_TRUE(at::equal(new_ground_pixels(logits, m, previous), expected));
}

// Play reads the flag: with it, the velocity paints the uncovered pixels and leaves their
// correction out; moved_reference agrees with the velocity's reference.
TEST(UncoveredGround, ThePlayedChoiceFollowsTheConfig) {
  at::manual_seed(63);
  const int h = 8, w = 8, m = 2, k = 3;
  PredictionConfig prediction;
  prediction.previous_frame_skip = true;
  prediction.move_pixels = m;
  prediction.paint_colours = k;
  prediction.move_choice = MoveChoice::kNewGround;
  prediction.uncovered_ground = true;
  const at::Tensor logits = patchy_logits(k, h, w);
  const at::Tensor output = at::cat({at::randn({2, 3, 3, h, w}), logits}, 2);
  const at::Tensor previous = few_colours(h, w);
  const at::Tensor paint = at::rand({k, 3}) * 2 - 1;
  const at::Tensor x_t = at::randn({2, 3, 3, h, w});
  const ChoiceInputs choice{paint, choice_draw(x_t)};
  const at::Tensor index = choice_index(logits, MoveChoice::kNewGround, choice.draw, m, previous);
  const at::Tensor painted = index >= kMoves;
  EXPECT_TRUE(at::equal(painted, new_ground_pixels(logits, m, previous)));
  EXPECT_GT(painted.sum().item<int64_t>(),
            (choice_index(logits, MoveChoice::kNewGround, choice.draw, m) >= kMoves)
                .sum()
                .item<int64_t>());
  // At full noise x̂0 is the reference where painted: the paint's colour, no correction.
  const at::Tensor x0 =
      x_t - velocity_from_output(prediction, output, x_t, at::ones({2, 3}), previous, choice);
  const at::Tensor r = moved_reference(previous, logits, m, MoveChoice::kNewGround, choice,
                                       /*uncovered_ground=*/true);
  const at::Tensor where = painted.unsqueeze(2).expand_as(r);
  EXPECT_TRUE(at::allclose(x0.masked_select(where), r.masked_select(where), 1e-5, 1e-5));
  const at::Tensor colour =
      at::embedding(paint, (index - kMoves).clamp_min(0)).permute({0, 1, 4, 2, 3});
  EXPECT_TRUE(at::equal(r.masked_select(where), colour.masked_select(where)));
}

}  // namespace
}  // namespace wc::model
