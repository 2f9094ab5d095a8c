// Note [New ground likelihood]: the loss against a per-pixel loop on fresh random palette frames,
// its gradient reaching the paint logits alone, and nothing to learn where nothing is new.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "engine/core/error.h"
#include "engine/model/prediction.h"
#include "engine/train/new_ground.h"
#include "tests/model/model_test_util.h"

namespace wc::train {
namespace {

constexpr int kMoves = model::PredictionConfig::kMoves;

TEST(NewGroundLoss, MatchesAPerPixelLoop) {
  at::manual_seed(61);  // fresh random inputs
  const int h = 8, w = 7, m = 2, k = 4;
  const at::Tensor paint = at::rand({k, 3}) * 2 - 1;
  const at::Tensor colour_index = at::randint(0, k, {2, 3, h, w}, at::kLong);
  at::Tensor target = at::embedding(paint, colour_index).permute({0, 1, 4, 2, 3}).contiguous();
  target[1][2][0][0][0] = 0.123f;  // a colour no paint has: left out
  at::Tensor logits = at::randn({2, 3, kMoves + k, h, w}) * 2;
  // Each frame's pixels lean to one move, so each edge is new ground somewhere.
  for (int f = 0; f < 3; ++f) logits.select(1, f).select(1, 1 + f) += 3.0;
  const double loss = new_ground_loss(logits, target, paint, m).item<double>();

  const at::Tensor fresh = model::new_ground_pixels(logits, m);
  double total = 0.0;
  int scored = 0;
  for (int b = 0; b < 2; ++b)
    for (int f = 0; f < 3; ++f)
      for (int row = 0; row < h; ++row)
        for (int col = 0; col < w; ++col) {
          if (!fresh[b][f][row][col].item<bool>()) continue;
          if (b == 1 && f == 2 && row == 0 && col == 0) continue;
          double norm = 0.0;
          for (int j = 0; j < k; ++j)
            norm += std::exp(logits[b][f][kMoves + j][row][col].item<double>());
          const int64_t c = colour_index[b][f][row][col].item<int64_t>();
          total -= logits[b][f][kMoves + c][row][col].item<double>() - std::log(norm);
          ++scored;
        }
  ASSERT_GT(scored, 20);
  EXPECT_NEAR(loss, total / scored, 1e-4);
}

TEST(NewGroundLoss, TeachesThePaintsAloneAndIsZeroWhereNothingIsNew) {
  at::manual_seed(62);
  const int h = 6, w = 6, m = 2, k = 3;
  const at::Tensor paint = at::rand({k, 3}) * 2 - 1;
  const at::Tensor target =
      at::embedding(paint, at::randint(0, k, {1, 2, h, w}, at::kLong)).permute({0, 1, 4, 2, 3});
  at::Tensor logits = at::randn({1, 2, kMoves + k, h, w});
  logits.select(2, 4) += 5.0;  // the move from the right: the right strip is new
  logits.requires_grad_(true);
  const at::Tensor loss = new_ground_loss(logits, target, paint, m);
  loss.backward();
  ASSERT_GT(loss.item<double>(), 0.0);
  const at::Tensor grad = logits.grad();
  EXPECT_EQ(grad.slice(2, 0, kMoves).abs().max().item<double>(), 0.0);
  EXPECT_GT(grad.slice(2, kMoves).slice(4, w - m).abs().max().item<double>(), 0.0);
  EXPECT_EQ(grad.slice(2, kMoves).slice(4, 0, w - m).abs().max().item<double>(), 0.0);
  // A still frame brings nothing in: the loss is exactly 0 and finite.
  at::Tensor still = logits.detach().clone();
  still.select(2, 0) += 100.0;
  still.requires_grad_(true);
  const at::Tensor none = new_ground_loss(still, target, paint, m);
  none.backward();
  EXPECT_EQ(none.item<double>(), 0.0);
  EXPECT_TRUE(at::isfinite(still.grad()).all().item<bool>());
  EXPECT_THAT(
      wc::testing::error_of([&] { new_ground_loss(logits, target, paint.slice(0, 0, 2), m); }),
      ::testing::HasSubstr("3 paint choices but 2 paint colours"));
}

}  // namespace
}  // namespace wc::train
