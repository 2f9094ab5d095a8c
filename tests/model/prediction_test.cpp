// Note [Previous-frame skip]: the output-to-velocity map against the posterior mean written out
// element by element, its limits (a zero output at full noise is the previous frame; t = 0 stays
// finite), the plain velocity passing through, and which frame each training frame refers to.
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
