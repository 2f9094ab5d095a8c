// Note [Choice likelihood]: which choices show a pixel and the loss against a per-pixel loop on
// fresh random palette frames; a pixel nothing shows is left out with a finite, zero gradient;
// and minimising it calibrates the softmax to how often each colour appears where no move
// explains the pixel.
#include <c10/core/GradMode.h>
#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "engine/model/prediction.h"
#include "engine/train/choice_likelihood.h"

namespace wc::train {
namespace {

constexpr int kMoves = model::PredictionConfig::kMoves;

// Frames of random palette colours ([B, F, 3, H, W]) by index into `paint` [K, 3].
at::Tensor palette_frames(const at::Tensor& paint, std::vector<int64_t> size) {
  const at::Tensor index = at::randint(0, paint.size(0), size, at::kLong);
  return at::embedding(paint, index).permute({0, 1, 4, 2, 3}).contiguous();
}

TEST(ChoiceLikelihood, MatchesAPerPixelLoop) {
  at::manual_seed(51);  // fresh random inputs
  const int h = 6, w = 7, m = 2, k = 4;
  const at::Tensor paint = at::rand({k, 3}) * 2 - 1;
  const at::Tensor previous = palette_frames(paint, {2, 2, h, w});
  // Half the target is the previous frame moved, half fresh colours; one pixel has a colour
  // outside the palette, which no choice shows.
  at::Tensor target = model::move_choices(previous, m).select(2, 3).clone();
  const at::Tensor fresh = palette_frames(paint, {2, 2, h, w});
  target.slice(4, 0, 3).copy_(fresh.slice(4, 0, 3));
  target[0][1][0][2][5] = 0.123f;
  const at::Tensor logits = at::randn({2, 2, kMoves + k, h, w}) * 2;

  const at::Tensor shows = showing_choices(previous, target, paint, m);
  const at::Tensor loss = choice_likelihood_loss(logits, previous, target, paint, m);
  const at::Tensor moves = model::move_choices(previous, m);
  double total = 0.0;
  int scored = 0;
  for (int b = 0; b < 2; ++b)
    for (int f = 0; f < 2; ++f)
      for (int row = 0; row < h; ++row)
        for (int col = 0; col < w; ++col) {
          double all = 0.0, shown = 0.0;
          bool any = false;
          for (int j = 0; j < kMoves + k; ++j) {
            bool same = true;
            for (int ch = 0; ch < 3; ++ch) {
              const float value = j < kMoves ? moves[b][f][j][ch][row][col].item<float>()
                                             : paint[j - kMoves][ch].item<float>();
              same = same && std::abs(value - target[b][f][ch][row][col].item<float>()) < 1e-4;
            }
            ASSERT_EQ(shows[b][f][j][row][col].item<bool>(), same) << "choice " << j;
            const double e = std::exp(logits[b][f][j][row][col].item<double>());
            all += e;
            if (same) shown += e, any = true;
          }
          if (!any) continue;
          total += -std::log(shown / all);
          ++scored;
        }
  EXPECT_EQ(scored, 2 * 2 * h * w - 1);
  EXPECT_NEAR(loss.item<double>(), total / scored, 1e-4);
}

TEST(ChoiceLikelihood, APixelNothingShowsHasAZeroFiniteGradient) {
  const at::Tensor paint = at::tensor({-1.0f, -1.0f, -1.0f, 1.0f, 1.0f, 1.0f}).view({2, 3});
  const at::Tensor previous = at::full({1, 1, 3, 4, 4}, -1.0f);
  const at::Tensor target = at::full({1, 1, 3, 4, 4}, 0.5f);  // no choice shows it
  target[0][0].select(1, 0).fill_(1.0f);  // row 0: white, which only the paint shows
  at::Tensor logits = at::randn({1, 1, kMoves + 2, 4, 4}).requires_grad_(true);
  const at::Tensor loss = choice_likelihood_loss(logits, previous, target, paint, 1);
  loss.backward();
  EXPECT_TRUE(std::isfinite(loss.item<double>()));
  EXPECT_TRUE(logits.grad().isfinite().all().item<bool>());
  EXPECT_EQ(logits.grad().slice(3, 1).abs().max().item<double>(), 0.0);
  EXPECT_GT(logits.grad().slice(3, 0, 1).abs().max().item<double>(), 0.0);
}

// New ground (a still previous frame of one colour, a target of 70% grass and 30% tufts that no
// move shows): the likelihood's softmax goes to 0.7 and 0.3.
TEST(ChoiceLikelihood, CalibratesTheDrawToHowOftenEachColourAppears) {
  at::manual_seed(52);
  const at::Tensor paint =
      at::tensor({0.2f, 0.6f, 0.1f, 0.0f, 0.3f, 0.0f, -1.0f, -1.0f, -1.0f}).view({3, 3});
  const int h = 32, w = 32;
  const at::Tensor previous = paint[2].view({1, 1, 3, 1, 1}).expand({1, 1, 3, h, w});
  const at::Tensor tuft = at::rand({1, 1, 1, h, w}) < 0.3;
  const at::Tensor target =
      at::where(tuft, paint[1].view({1, 1, 3, 1, 1}), paint[0].view({1, 1, 3, 1, 1}));
  // One logit vector shared by every pixel, trained by plain gradient descent.
  at::Tensor shared = at::zeros({kMoves + 3}).requires_grad_(true);
  for (int step = 0; step < 400; ++step) {
    const at::Tensor logits = shared.view({1, 1, -1, 1, 1}).expand({1, 1, -1, h, w});
    const at::Tensor loss = choice_likelihood_loss(logits, previous, target, paint, 1);
    if (shared.grad().defined()) shared.grad().zero_();
    loss.backward();
    at::NoGradGuard no_grad;
    shared -= 2.0 * shared.grad();
  }
  const at::Tensor p = at::softmax(shared.detach(), 0);
  const double tuft_share = tuft.to(at::kFloat).mean().item<double>();
  EXPECT_NEAR(p[kMoves + 1].item<double>(), tuft_share, 0.02);
  EXPECT_NEAR(p[kMoves].item<double>(), 1.0 - tuft_share, 0.02);
}

}  // namespace
}  // namespace wc::train
