// PSNR and SSIM on synthetic frames with known answers, and SSIM against a direct
// (loop-per-window) implementation of Wang et al.'s definition.
#include <gtest/gtest.h>

#include <cmath>

#include "engine/core/error.h"
#include "engine/eval/frame_tensor.h"
#include "engine/eval/psnr.h"
#include "engine/eval/ssim.h"

namespace wc::eval {
namespace {

at::Tensor random_frame(int height, int width, uint64_t seed, int lo = 0, int hi = 256) {
  at::manual_seed(seed);
  at::Tensor frame = at::randint(lo, hi, {height, width, 4}, at::kLong).to(at::kByte);
  frame.select(2, 3).fill_(255);
  return frame;
}

at::Tensor constant_frame(int height, int width, int value) {
  at::Tensor frame = at::full({height, width, 4}, value, at::kByte);
  frame.select(2, 3).fill_(255);
  return frame;
}

TEST(Psnr, IdenticalFramesScoreTheCap) {
  const at::Tensor a = random_frame(32, 48, 1);
  EXPECT_EQ(mean_squared_error(a, a.clone()), 0.0);
  EXPECT_EQ(psnr(a, a.clone()), kPsnrCapDb);
}

TEST(Psnr, ConstantOffsetGivesTheExactValue) {
  const at::Tensor a = random_frame(32, 32, 2, 0, 250);
  at::Tensor b = a.clone();
  b.narrow(2, 0, 3).add_(5);  // every RGB value +5, no clipping; alpha untouched
  EXPECT_DOUBLE_EQ(mean_squared_error(a, b), 25.0);
  EXPECT_NEAR(psnr(a, b), 10.0 * std::log10(255.0 * 255.0 / 25.0), 1e-12);  // 34.15 dB
}

TEST(Psnr, AlphaIsIgnored) {
  const at::Tensor a = random_frame(16, 16, 3);
  at::Tensor b = a.clone();
  b.select(2, 3).fill_(0);
  EXPECT_EQ(psnr(a, b), kPsnrCapDb);
}

TEST(Psnr, GaussianNoiseOfKnownSigma) {
  const at::Tensor a = constant_frame(128, 128, 128);
  for (double sigma : {2.0, 8.0, 20.0}) {
    at::manual_seed(7);
    const at::Tensor noise = at::randn({128, 128, 3}, at::kDouble) * sigma;
    at::Tensor b = a.clone();
    b.narrow(2, 0, 3).copy_((a.narrow(2, 0, 3).to(at::kDouble) + noise).round().clamp(0, 255));
    // Rounding adds variance 1/12; 49 152 samples put the estimate within ~1% of sigma².
    const double expected = 10.0 * std::log10(255.0 * 255.0 / (sigma * sigma + 1.0 / 12.0));
    EXPECT_NEAR(psnr(a, b), expected, 0.1) << "sigma " << sigma;
  }
}

TEST(Psnr, MaskLeavesOutExcludedPixels) {
  const at::Tensor a = random_frame(32, 32, 4, 0, 200);
  at::Tensor b = a.clone();
  b.narrow(0, 8, 4).narrow(1, 10, 6).add_(50);  // a 6x4 patch differs
  const at::Tensor mask = mask_excluding(32, 32, {{10, 8, 6, 4}});
  EXPECT_EQ(mask.sum().item<int64_t>(), 32 * 32 - 24);
  EXPECT_EQ(psnr(a, b, mask), kPsnrCapDb);
  EXPECT_LT(psnr(a, b), 40.0);
  // Only the masked-in part of the difference counts, averaged over masked-in pixels.
  const at::Tensor half = mask_excluding(32, 32, {{10, 8, 3, 4}});
  EXPECT_NEAR(mean_squared_error(a, b, half), 12.0 * 3 * 2500.0 / (3.0 * (1024 - 12)), 1e-9);
}

TEST(Psnr, RejectsMismatchedFramesAndEmptyMasks) {
  EXPECT_THROW(psnr(random_frame(16, 16, 5), random_frame(16, 17, 5)), Error);
  EXPECT_THROW(psnr(random_frame(16, 16, 5), random_frame(16, 16, 5).to(at::kFloat)), Error);
  const at::Tensor a = random_frame(16, 16, 6);
  EXPECT_THROW(psnr(a, a, mask_excluding(16, 16, {{0, 0, 16, 16}})), Error);
}

// Wang et al.'s definition, one window at a time.
double direct_ssim(const at::Tensor& a, const at::Tensor& b) {
  const at::Tensor x = luma(a), y = luma(b), w = ssim_window();
  const auto xa = x.accessor<double, 2>(), ya = y.accessor<double, 2>();
  const auto wa = w.accessor<double, 2>();
  const double c1 = std::pow(0.01 * 255, 2), c2 = std::pow(0.03 * 255, 2);
  double sum = 0.0;
  int count = 0;
  for (int64_t i = 0; i + kSsimWindow <= x.size(0); ++i) {
    for (int64_t j = 0; j + kSsimWindow <= x.size(1); ++j) {
      double mx = 0, my = 0;
      for (int u = 0; u < kSsimWindow; ++u)
        for (int v = 0; v < kSsimWindow; ++v) {
          mx += wa[u][v] * xa[i + u][j + v];
          my += wa[u][v] * ya[i + u][j + v];
        }
      double vx = 0, vy = 0, cov = 0;
      for (int u = 0; u < kSsimWindow; ++u)
        for (int v = 0; v < kSsimWindow; ++v) {
          const double dx = xa[i + u][j + v] - mx, dy = ya[i + u][j + v] - my;
          vx += wa[u][v] * dx * dx;
          vy += wa[u][v] * dy * dy;
          cov += wa[u][v] * dx * dy;
        }
      sum += (2 * mx * my + c1) * (2 * cov + c2) / ((mx * mx + my * my + c1) * (vx + vy + c2));
      ++count;
    }
  }
  return sum / count;
}

// Detail is the mean absolute luma step between neighbours: none on a flat frame; on vertical
// stripes of grey levels 0 and 100, 100 across every column step and 0 down the rows.
TEST(MeanGradient, FlatFramesHaveNoneAndStripesTheirStep) {
  at::Tensor frame = at::full({8, 8, 4}, 77, at::kByte);
  EXPECT_EQ(mean_gradient(frame), 0.0);
  frame.slice(1, 0, 8, 2).slice(2, 0, 3).fill_(100);
  frame.slice(1, 1, 8, 2).slice(2, 0, 3).fill_(0);
  EXPECT_NEAR(mean_gradient(frame), 0.5 * 100.0, 1e-9);
}

TEST(Ssim, WindowIsTheNormalisedGaussian) {
  const at::Tensor w = ssim_window();
  ASSERT_EQ(w.size(0), 11);
  EXPECT_NEAR(w.sum().item<double>(), 1.0, 1e-12);
  const double ratio = (w[5][6] / w[5][5]).item<double>();
  EXPECT_NEAR(ratio, std::exp(-1.0 / (2 * 1.5 * 1.5)), 1e-12);
}

TEST(Ssim, IdenticalFramesScoreOne) {
  const at::Tensor a = random_frame(40, 30, 8);
  EXPECT_NEAR(ssim(a, a.clone()), 1.0, 1e-12);
}

TEST(Ssim, ConstantFramesFollowTheLuminanceTerm) {
  // No variance: the map is (2ab + C1) / (a² + b² + C1) everywhere.
  const double c1 = std::pow(0.01 * 255, 2);
  for (auto [p, q] : {std::pair{100, 120}, std::pair{10, 240}, std::pair{0, 255}}) {
    const double expected = (2.0 * p * q + c1) / (double(p) * p + double(q) * q + c1);
    EXPECT_NEAR(ssim(constant_frame(16, 16, p), constant_frame(16, 16, q)), expected, 1e-9);
  }
}

TEST(Ssim, MatchesTheDirectDefinition) {
  const at::Tensor a = random_frame(24, 20, 9);
  at::manual_seed(10);
  at::Tensor b = a.clone();
  b.narrow(2, 0, 3).copy_(
      (a.narrow(2, 0, 3).to(at::kDouble) + at::randn({24, 20, 3}, at::kDouble) * 30)
          .clamp(0, 255)
          .round());
  EXPECT_NEAR(ssim(a, b), direct_ssim(a, b), 1e-9);
}

TEST(Ssim, FallsAsNoiseGrows) {
  at::manual_seed(11);
  // A blocky textured image, so structure exists for noise to destroy.
  const at::Tensor base = (at::randn({16, 16}, at::kDouble) * 60 + 128).clamp(0, 255);
  const at::Tensor up = base.repeat_interleave(4, 0).repeat_interleave(4, 1).round();
  at::Tensor a = at::full({64, 64, 4}, 255, at::kByte);
  for (int c = 0; c < 3; ++c) a.select(2, c).copy_(up);
  double previous = 1.0;
  for (double sigma : {2.0, 10.0, 40.0, 100.0}) {
    at::Tensor b = a.clone();
    b.narrow(2, 0, 3).copy_(
        (a.narrow(2, 0, 3).to(at::kDouble) + at::randn({64, 64, 3}, at::kDouble) * sigma)
            .clamp(0, 255)
            .round());
    const double value = ssim(a, b);
    EXPECT_LT(value, previous) << "sigma " << sigma;
    previous = value;
  }
  EXPECT_LT(previous, 0.6);
}

TEST(Ssim, RejectsFramesSmallerThanTheWindow) {
  EXPECT_THROW(ssim(constant_frame(10, 40, 1), constant_frame(10, 40, 1)), Error);
}

}  // namespace
}  // namespace wc::eval
