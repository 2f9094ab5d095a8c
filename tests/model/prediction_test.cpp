// Note [Previous-frame skip]: the output-to-velocity map against the posterior mean written out
// element by element, its limits (a zero output at full noise is the previous frame; t = 0 stays
// finite), the plain velocity passing through, and which frame each training frame refers to.
// Note [Moved reference]: the five choices against pixel lookups with the border repeated, the
// softmax mix against its sum written out, and the velocity with a moved reference.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <vector>

#include "engine/model/prediction.h"

namespace wc::model {
namespace {

PredictionConfig skip(double spread) {
  PredictionConfig p;
  p.previous_frame_skip = true;
  p.spread = spread;
  return p;
}

// x0 = x_t − t·v: the clean frame the velocity implies.
at::Tensor implied_x0(const at::Tensor& x_t, const at::Tensor& t, const at::Tensor& v) {
  return x_t - t.view({t.size(0), t.size(1), 1, 1, 1}) * v;
}

TEST(PreviousFrameSkip, MatchesThePosteriorMeanElementByElement) {
  at::manual_seed(11);  // fresh random inputs
  const at::Tensor x_t = at::randn({2, 3, 3, 4, 4});
  const at::Tensor reference = at::rand({2, 3, 3, 4, 4}) * 2 - 1;
  const at::Tensor output = at::randn({2, 3, 3, 4, 4});
  const at::Tensor t = at::rand({2, 3}) * 0.98 + 0.02;
  const double s = 0.4;
  const at::Tensor x0 =
      implied_x0(x_t, t, velocity_from_output(skip(s), output, x_t, t, reference));
  auto x = x_t.accessor<float, 5>();
  auto r = reference.accessor<float, 5>();
  auto o = output.accessor<float, 5>();
  auto got = x0.accessor<float, 5>();
  for (int b = 0; b < 2; ++b) {
    for (int f = 0; f < 3; ++f) {
      const double level = t[b][f].item<double>(), a = 1.0 - level;
      const double d = a * a * s * s + level * level;
      const double k = a * s * s / d, c = s * level / std::sqrt(d);
      for (int ch = 0; ch < 3; ++ch) {
        for (int i = 0; i < 4; ++i) {
          for (int j = 0; j < 4; ++j) {
            const double expected = r[b][f][ch][i][j] +
                                    k * (x[b][f][ch][i][j] - a * r[b][f][ch][i][j]) +
                                    c * o[b][f][ch][i][j];
            EXPECT_NEAR(got[b][f][ch][i][j], expected, 1e-4);
          }
        }
      }
    }
  }
}

TEST(PreviousFrameSkip, ZeroOutputAtFullNoiseIsThePreviousFrame) {
  at::manual_seed(12);
  const at::Tensor x_t = at::randn({1, 2, 3, 8, 8});
  const at::Tensor reference = at::rand({1, 2, 3, 8, 8}) * 2 - 1;
  const at::Tensor t = at::ones({1, 2});
  const at::Tensor v = velocity_from_output(skip(0.5), at::zeros_like(x_t), x_t, t, reference);
  EXPECT_TRUE(at::allclose(implied_x0(x_t, t, v), reference, 1e-5, 1e-6));
}

// At t = 0 the frame is clean: the estimate is x_t itself and the velocity is finite.
TEST(PreviousFrameSkip, CleanFramesGiveAFiniteVelocity) {
  at::manual_seed(13);
  const at::Tensor x_t = at::randn({1, 1, 3, 8, 8});
  const at::Tensor reference = at::randn({1, 1, 3, 8, 8});
  const at::Tensor output = at::randn({1, 1, 3, 8, 8});
  const at::Tensor v = velocity_from_output(skip(0.5), output, x_t, at::zeros({1, 1}), reference);
  EXPECT_TRUE(v.isfinite().all().item<bool>());
  EXPECT_LT(v.abs().max().item<double>(), 20.0);
}

TEST(PreviousFrameSkip, TheResultHasTheOutputsDtype) {
  const at::Tensor x_t = at::randn({1, 1, 3, 8, 8}).to(at::kBFloat16);
  const at::Tensor v =
      velocity_from_output(skip(0.5), at::zeros_like(x_t), x_t, at::full({1, 1}, 0.5), x_t);
  EXPECT_EQ(v.scalar_type(), at::kBFloat16);
}

TEST(PreviousFrameSkip, PlainVelocityPassesThrough) {
  const at::Tensor output = at::randn({1, 2, 3, 8, 8});
  const at::Tensor v =
      velocity_from_output(PredictionConfig{}, output, at::Tensor(), at::Tensor(), at::Tensor());
  EXPECT_TRUE(v.equal(output));
}

// The previous frame's pixel that choice j shows at (row, col), the border repeated.
float chosen_pixel(const at::TensorAccessor<float, 5>& prev, int b, int f, int ch, int row, int col,
                   int j, int m, int h, int w) {
  const int offsets[5][2] = {{0, 0}, {-m, 0}, {m, 0}, {0, -m}, {0, m}};
  const int r = std::clamp(row + offsets[j][0], 0, h - 1);
  const int c = std::clamp(col + offsets[j][1], 0, w - 1);
  return prev[b][f][ch][r][c];
}

TEST(MovedReference, ChoicesAreThePreviousFrameMovedEachWayWithTheBorderRepeated) {
  at::manual_seed(14);
  const int h = 6, w = 7, m = 2;
  const at::Tensor previous = at::randn({2, 2, 3, h, w});
  const at::Tensor choices = move_choices(previous, m);
  ASSERT_EQ(choices.sizes(), at::IntArrayRef({2, 2, 5, 3, h, w}));
  auto prev = previous.accessor<float, 5>();
  auto got = choices.accessor<float, 6>();
  for (int b = 0; b < 2; ++b)
    for (int f = 0; f < 2; ++f)
      for (int j = 0; j < 5; ++j)
        for (int ch = 0; ch < 3; ++ch)
          for (int row = 0; row < h; ++row)
            for (int col = 0; col < w; ++col)
              ASSERT_EQ(got[b][f][j][ch][row][col],
                        chosen_pixel(prev, b, f, ch, row, col, j, m, h, w))
                  << "choice " << j << " at " << row << "," << col;
}

TEST(MovedReference, MixesTheChoicesBySoftmaxPerPixel) {
  at::manual_seed(15);
  const int h = 5, w = 6, m = 1;
  const at::Tensor previous = at::randn({1, 2, 3, h, w});
  const at::Tensor logits = at::randn({1, 2, 5, h, w}) * 2;
  const at::Tensor mixed = moved_reference(previous, logits, m);
  auto prev = previous.accessor<float, 5>();
  auto l = logits.accessor<float, 5>();
  auto got = mixed.accessor<float, 5>();
  for (int f = 0; f < 2; ++f)
    for (int row = 0; row < h; ++row)
      for (int col = 0; col < w; ++col) {
        double total = 0.0;
        for (int j = 0; j < 5; ++j) total += std::exp(double(l[0][f][j][row][col]));
        for (int ch = 0; ch < 3; ++ch) {
          double expected = 0.0;
          for (int j = 0; j < 5; ++j)
            expected += std::exp(double(l[0][f][j][row][col])) / total *
                        chosen_pixel(prev, 0, f, ch, row, col, j, m, h, w);
          EXPECT_NEAR(got[0][f][ch][row][col], expected, 1e-5);
        }
      }
}

// Note [Sharpest move]: each pixel takes its argmax choice alone, whatever the other logits.
TEST(MovedReference, TheSharpestChoiceTakesEachPixelsLikeliestMove) {
  at::manual_seed(18);
  const int h = 5, w = 6, m = 2;
  const at::Tensor previous = at::randn({2, 1, 3, h, w});
  const at::Tensor logits = at::randn({2, 1, 5, h, w});
  const at::Tensor sharp = moved_reference(previous, logits, m, MoveChoice::kSharpest);
  ASSERT_EQ(sharp.sizes(), previous.sizes());
  auto prev = previous.accessor<float, 5>();
  auto l = logits.accessor<float, 5>();
  auto got = sharp.accessor<float, 5>();
  for (int b = 0; b < 2; ++b)
    for (int row = 0; row < h; ++row)
      for (int col = 0; col < w; ++col) {
        int best = 0;
        for (int j = 1; j < 5; ++j)
          if (l[b][0][j][row][col] > l[b][0][best][row][col]) best = j;
        for (int ch = 0; ch < 3; ++ch)
          ASSERT_EQ(got[b][0][ch][row][col], chosen_pixel(prev, b, 0, ch, row, col, best, m, h, w));
      }
}

// Note [Straight-through moves]: the sharpest frame forward, the mix's gradient backward.
TEST(MovedReference, StraightThroughIsTheSharpestForwardAndTheMixBackward) {
  at::manual_seed(19);
  const at::Tensor previous = at::randn({1, 2, 3, 6, 6});
  const at::Tensor weights = at::randn({1, 2, 3, 6, 6});  // a loss that weighs every pixel
  const at::Tensor logits = at::randn({1, 2, 5, 6, 6});
  at::Tensor through = logits.clone().requires_grad_(true);
  at::Tensor mixed = logits.clone().requires_grad_(true);
  const at::Tensor forward = straight_through_reference(previous, through, 2);
  EXPECT_TRUE(at::allclose(forward, moved_reference(previous, logits, 2, MoveChoice::kSharpest),
                           1e-6, 1e-6));
  (forward * weights).sum().backward();
  (moved_reference(previous, mixed, 2) * weights).sum().backward();
  ASSERT_TRUE(through.grad().defined());
  EXPECT_GT(through.grad().abs().max().item<double>(), 0.0);
  EXPECT_TRUE(at::allclose(through.grad(), mixed.grad(), 1e-5, 1e-6));
}

// With a moved reference the output carries the correction, then the logits; at full noise a
// zero correction and a sure choice give that choice: a frame moved one step as the clean frame.
TEST(MovedReference, ASureChoiceAtFullNoiseIsThePreviousFrameMoved) {
  at::manual_seed(16);
  PredictionConfig p = skip(0.5);
  p.move_pixels = 2;
  const at::Tensor x_t = at::randn({1, 1, 3, 8, 8});
  const at::Tensor previous = at::rand({1, 1, 3, 8, 8}) * 2 - 1;
  const at::Tensor t = at::ones({1, 1});
  for (int j = 0; j < 5; ++j) {
    at::Tensor output = at::zeros({1, 1, 8, 8, 8});
    output.select(2, 3 + j).fill_(30.0);
    const at::Tensor v = velocity_from_output(p, output, x_t, t, previous);
    ASSERT_EQ(v.sizes(), x_t.sizes());
    EXPECT_TRUE(
        at::allclose(implied_x0(x_t, t, v), move_choices(previous, 2).select(2, j), 1e-5, 1e-5))
        << "choice " << j;
  }
}

// At any level the velocity is the plain skip's with the mixed frame as the reference.
TEST(MovedReference, IsThePlainSkipAroundTheMixedFrame) {
  at::manual_seed(17);
  PredictionConfig p = skip(0.3);
  p.move_pixels = 1;
  const at::Tensor x_t = at::randn({2, 2, 3, 4, 4});
  const at::Tensor previous = at::randn({2, 2, 3, 4, 4});
  const at::Tensor output = at::randn({2, 2, 8, 4, 4});
  const at::Tensor t = at::rand({2, 2}) * 0.9 + 0.05;
  const at::Tensor v = velocity_from_output(p, output, x_t, t, previous);
  const at::Tensor mixed = moved_reference(previous, output.slice(2, 3), 1);
  const at::Tensor plain = velocity_from_output(skip(0.3), output.slice(2, 0, 3), x_t, t, mixed);
  EXPECT_TRUE(at::allclose(v, plain, 1e-5, 1e-5));
}

TEST(PreviousFrameReference, EachNoisyFrameGetsTheFrameBeforeItsBlock) {
  // Frame i holds the value i, so the reference shows which frame was picked.
  const at::Tensor frames = at::arange(6, at::kFloat).view({1, 6, 1, 1, 1}).expand({2, 6, 3, 2, 2});
  const auto picked = [&](int fpb) {
    const at::Tensor ref = previous_frame_reference(frames, fpb);
    std::vector<int> out;
    for (int64_t i = 0; i < ref.size(1); ++i) out.push_back(ref[1][i][2][1][1].item<int>());
    return out;
  };
  EXPECT_EQ(picked(1), (std::vector<int>{0, 1, 2, 3, 4}));
  EXPECT_EQ(picked(2), (std::vector<int>{1, 1, 3, 3}));
  EXPECT_EQ(picked(3), (std::vector<int>{2, 2, 2}));
}

// At play time every frame of a block refers to the last frame shown before it.
TEST(PreviousFrameReference, ABlockRefersToTheLastFrameBeforeIt) {
  const at::Tensor before = at::arange(4, at::kFloat).view({1, 4, 1, 1, 1}).expand({2, 4, 3, 2, 2});
  const at::Tensor ref = block_reference(before, 3);
  ASSERT_EQ(ref.sizes(), at::IntArrayRef({2, 3, 3, 2, 2}));
  EXPECT_TRUE(ref.eq(3).all().item<bool>());
  EXPECT_TRUE(ref.is_contiguous());
}

}  // namespace
}  // namespace wc::model
