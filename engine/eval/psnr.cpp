// See psnr.h.
#include "engine/eval/psnr.h"

#include <algorithm>
#include <cmath>

#include "engine/core/error.h"
#include "engine/eval/frame_tensor.h"

namespace wc::eval {

double mean_squared_error(const at::Tensor& a, const at::Tensor& b, const at::Tensor& mask) {
  check_frame_pair(a, b, "psnr");
  const at::Tensor squared = (rgb_planes(a) - rgb_planes(b)).pow(2);  // [3, H, W]
  if (!mask.defined()) return squared.mean().item<double>();
  if (mask.dim() != 2 || mask.size(0) != a.size(0) || mask.size(1) != a.size(1) ||
      mask.scalar_type() != at::kBool) {
    throw Error("psnr", "the mask must be bool [H, W] of the frame's size");
  }
  const int64_t pixels = mask.sum().item<int64_t>();
  if (pixels == 0) throw Error("psnr", "the mask selects no pixel");
  const double sum = (squared * mask.unsqueeze(0).to(at::kDouble)).sum().item<double>();
  return sum / static_cast<double>(3 * pixels);
}

double psnr_from_mse(double mse) {
  if (std::isnan(mse)) return mse;
  if (mse <= 0.0) return kPsnrCapDb;
  return std::min(kPsnrCapDb, 10.0 * std::log10(255.0 * 255.0 / mse));
}

double psnr(const at::Tensor& a, const at::Tensor& b, const at::Tensor& mask) {
  return psnr_from_mse(mean_squared_error(a, b, mask));
}

at::Tensor mask_excluding(int width, int height, const std::vector<game::PixelRect>& excluded) {
  at::Tensor mask = at::ones({height, width}, at::kBool);
  for (const game::PixelRect& rect : excluded) {
    const int x0 = std::clamp(rect.x, 0, width), x1 = std::clamp(rect.x + rect.width, 0, width);
    const int y0 = std::clamp(rect.y, 0, height), y1 = std::clamp(rect.y + rect.height, 0, height);
    if (x1 > x0 && y1 > y0) mask.narrow(0, y0, y1 - y0).narrow(1, x0, x1 - x0).fill_(false);
  }
  return mask;
}

}  // namespace wc::eval
