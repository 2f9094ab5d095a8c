// Note [Stay bias]: the bias lands on "as it is" alone and never in the caller's logits; played
// with "sharpest" or "new_ground", each pixel takes the likeliest move after the bias, checked
// against a per-pixel loop on fresh random logits, and the velocity is the unbiased one of logits
// with the bias added by hand.
#include <gtest/gtest.h>

#include "engine/model/prediction.h"

namespace wc::model {
namespace {

constexpr int kMoves = PredictionConfig::kMoves;

PredictionConfig moves_config(MoveChoice how, int paints, double stay_bias) {
  PredictionConfig p;
  p.previous_frame_skip = true;
  p.move_pixels = 2;
  p.move_choice = how;
  p.paint_colours = paints;
  p.stay_bias = stay_bias;
  return p;
}

TEST(StayBias, AddsToAsItIsAloneAndLeavesTheLogitsAlone) {
  at::manual_seed(71);  // fresh random inputs
  const at::Tensor logits = at::randn({2, 3, kMoves + 2, 4, 5});
  const at::Tensor before = logits.clone();
  const at::Tensor biased = with_stay_bias(logits, 1.25);
  EXPECT_TRUE(at::equal(logits, before));
  EXPECT_EQ(biased.scalar_type(), at::kFloat);
  EXPECT_TRUE(at::allclose(biased.select(2, 0), logits.select(2, 0) + 1.25));
  EXPECT_TRUE(at::equal(biased.slice(2, 1), logits.slice(2, 1)));
  EXPECT_TRUE(at::equal(with_stay_bias(logits, 0.0), logits));
  EXPECT_TRUE(at::equal(with_stay_bias(logits.to(at::kBFloat16), 0.5).select(2, 0),
                        logits.to(at::kBFloat16).to(at::kFloat).select(2, 0) + 0.5));
}

// At full noise with a zero correction x̂0 is the chosen move of the previous frame: the argmax of
// the biased logits, pixel by pixel; some pixels stay that would have moved.
TEST(StayBias, TheSharpestMoveIsTakenAfterTheBias) {
  at::manual_seed(72);
  const int h = 6, w = 7;
  const double b = 0.8;
  const at::Tensor logits = at::randn({2, 3, kMoves, h, w});
  const at::Tensor output = at::cat({at::zeros({2, 3, 3, h, w}), logits}, 2);
  const at::Tensor previous = at::rand({2, 3, 3, h, w}) * 2 - 1;
  const at::Tensor x_t = at::randn({2, 3, 3, h, w});
  const at::Tensor t = at::ones({2, 3});
  const at::Tensor x0 = x_t - velocity_from_output(moves_config(MoveChoice::kSharpest, 0, b),
                                                   output, x_t, t, previous);
  const at::Tensor moves = move_choices(previous, 2);
  auto l = logits.accessor<float, 5>();
  int kept_by_bias = 0;
  for (int i = 0; i < 2; ++i)
    for (int f = 0; f < 3; ++f)
      for (int row = 0; row < h; ++row)
        for (int col = 0; col < w; ++col) {
          int best = 0, plain = 0;
          for (int j = 1; j < kMoves; ++j) {
            if (l[i][f][j][row][col] > l[i][f][best][row][col] + (best == 0 ? b : 0.0)) best = j;
            if (l[i][f][j][row][col] > l[i][f][plain][row][col]) plain = j;
          }
          kept_by_bias += best == 0 && plain != 0;
          for (int c = 0; c < 3; ++c)
            ASSERT_NEAR(x0[i][f][c][row][col].item<float>(),
                        moves[i][f][best][c][row][col].item<float>(), 1e-5);
        }
  EXPECT_GT(kept_by_bias, 0);
}

// New ground too: the biased velocity is the unbiased velocity of logits biased by hand, paints
// and draws included.
TEST(StayBias, NewGroundPlaysTheBiasedLogits) {
  at::manual_seed(73);
  const int h = 8, w = 8, k = 3;
  const at::Tensor logits = at::randn({2, 3, kMoves + k, h, w}) * 2;
  const at::Tensor correction = at::randn({2, 3, 3, h, w});
  const at::Tensor previous = at::rand({2, 3, 3, h, w}) * 2 - 1;
  const at::Tensor x_t = at::randn({2, 3, 3, h, w});
  const ChoiceInputs choice{at::rand({k, 3}) * 2 - 1, choice_draw(x_t)};
  const at::Tensor t = at::rand({2, 3}) * 0.9 + 0.1;
  at::Tensor by_hand = logits.clone();
  by_hand.select(2, 0) += 1.5;
  const at::Tensor biased =
      velocity_from_output(moves_config(MoveChoice::kNewGround, k, 1.5),
                           at::cat({correction, logits}, 2), x_t, t, previous, choice);
  const at::Tensor plain =
      velocity_from_output(moves_config(MoveChoice::kNewGround, k, 0.0),
                           at::cat({correction, by_hand}, 2), x_t, t, previous, choice);
  EXPECT_TRUE(at::allclose(biased, plain, 1e-5, 1e-5));
  EXPECT_FALSE(at::allclose(
      biased, velocity_from_output(moves_config(MoveChoice::kNewGround, k, 0.0),
                                   at::cat({correction, logits}, 2), x_t, t, previous, choice)));
}

}  // namespace
}  // namespace wc::model
