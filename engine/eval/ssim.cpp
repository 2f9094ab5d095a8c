// See ssim.h. Local means and (co)variances come from filtering the five stacked planes with the
// separable Gaussian as shifted-slice sums (much faster on the CPU than a float64 conv2d).
#include "engine/eval/ssim.h"

#include <cmath>
#include <string>
#include <vector>

#include "engine/core/error.h"
#include "engine/eval/frame_tensor.h"

namespace wc::eval {

namespace {

// The 1-D factor of the window, normalised to sum 1.
std::vector<double> gaussian_taps() {
  std::vector<double> taps(kSsimWindow);
  double sum = 0.0;
  for (int i = 0; i < kSsimWindow; ++i) {
    const double x = i - kSsimWindow / 2;
    taps[static_cast<size_t>(i)] = std::exp(-(x * x) / (2.0 * kSsimSigma * kSsimSigma));
    sum += taps[static_cast<size_t>(i)];
  }
  for (double& tap : taps) tap /= sum;
  return taps;
}

// "Valid" filtering of [N, H, W] along `dim` (1 or 2) by the taps.
at::Tensor filter_valid(const at::Tensor& planes, int64_t dim, const std::vector<double>& taps) {
  const int64_t out = planes.size(dim) - kSsimWindow + 1;
  at::Tensor sum = planes.narrow(dim, 0, out) * taps[0];
  for (int i = 1; i < kSsimWindow; ++i)
    sum.add_(planes.narrow(dim, i, out), taps[static_cast<size_t>(i)]);
  return sum;
}

}  // namespace

at::Tensor ssim_window() {
  const std::vector<double> taps = gaussian_taps();
  const at::Tensor g = at::tensor(taps, at::kDouble);
  return at::outer(g, g);
}

double ssim(const at::Tensor& a, const at::Tensor& b) {
  check_frame_pair(a, b, "ssim");
  if (a.size(0) < kSsimWindow || a.size(1) < kSsimWindow) {
    throw Error("ssim",
                "frames must be at least " + std::to_string(kSsimWindow) + " pixels on a side");
  }
  constexpr double kL = 255.0;
  constexpr double kC1 = (0.01 * kL) * (0.01 * kL);
  constexpr double kC2 = (0.03 * kL) * (0.03 * kL);
  const at::Tensor x = luma(a), y = luma(b);
  // [5, H, W]: x, y, x², y², xy, filtered as a batch by the same window.
  const std::vector<double> taps = gaussian_taps();
  const at::Tensor planes = at::stack({x, y, x * x, y * y, x * y});
  const at::Tensor filtered = filter_valid(filter_valid(planes, 1, taps), 2, taps);
  const at::Tensor mu_x = filtered[0], mu_y = filtered[1];
  const at::Tensor var_x = filtered[2] - mu_x * mu_x;
  const at::Tensor var_y = filtered[3] - mu_y * mu_y;
  const at::Tensor cov = filtered[4] - mu_x * mu_y;
  const at::Tensor map = ((2.0 * mu_x * mu_y + kC1) * (2.0 * cov + kC2)) /
                         ((mu_x * mu_x + mu_y * mu_y + kC1) * (var_x + var_y + kC2));
  return map.mean().item<double>();
}

}  // namespace wc::eval
