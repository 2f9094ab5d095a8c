// See frame_tensor.h.
#include "engine/eval/frame_tensor.h"

#include <string>

#include "engine/core/error.h"

namespace wc::eval {

at::Tensor copy_rgba(const uint8_t* rgba, int width, int height) {
  // from_blob never owns the bytes; the clone outlives the frame source's next step().
  return at::from_blob(const_cast<uint8_t*>(rgba), {height, width, 4}, at::kByte).clone();
}

void check_frame(const at::Tensor& frame, const char* what) {
  if (!frame.defined() || frame.dim() != 3 || frame.size(2) < 3 ||
      frame.scalar_type() != at::kByte || !frame.device().is_cpu()) {
    throw Error(what, "a frame must be a CPU uint8 tensor [H, W, C] with C >= 3");
  }
}

void check_frame_pair(const at::Tensor& a, const at::Tensor& b, const char* what) {
  check_frame(a, what);
  check_frame(b, what);
  if (a.size(0) != b.size(0) || a.size(1) != b.size(1)) {
    throw Error(what, "frames differ in size: " + std::to_string(a.size(1)) + "x" +
                          std::to_string(a.size(0)) + " vs " + std::to_string(b.size(1)) + "x" +
                          std::to_string(b.size(0)));
  }
}

at::Tensor rgb_planes(const at::Tensor& frame) {
  return frame.narrow(2, 0, 3).permute({2, 0, 1}).to(at::kDouble);
}

at::Tensor luma(const at::Tensor& frame) {
  const at::Tensor rgb = rgb_planes(frame);
  return rgb[0] * 0.299 + rgb[1] * 0.587 + rgb[2] * 0.114;
}

double mean_gradient(const at::Tensor& frame) {
  const at::Tensor y = luma(frame);
  const at::Tensor gx = (y.narrow(1, 1, y.size(1) - 1) - y.narrow(1, 0, y.size(1) - 1)).abs();
  const at::Tensor gy = (y.narrow(0, 1, y.size(0) - 1) - y.narrow(0, 0, y.size(0) - 1)).abs();
  return 0.5 * (gx.mean().item<double>() + gy.mean().item<double>());
}

}  // namespace wc::eval
