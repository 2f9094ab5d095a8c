// See decode.h.
#include "engine/rollout/decode.h"

#include "engine/core/error.h"

namespace wc::rollout {

at::Tensor decode_rgba(const at::Tensor& frames) {
  if (frames.dim() != 4 || frames.size(1) != 3) {
    throw Error("decode", "expected frames [F, 3, H, W] (pixel space)");
  }
  const at::Tensor rgb = ((frames.to(at::kFloat).clamp(-1.0, 1.0) + 1.0) * 127.5)
                             .round()
                             .to(at::kByte)
                             .permute({0, 2, 3, 1});
  const at::Tensor alpha =
      at::full({frames.size(0), frames.size(2), frames.size(3), 1}, 255, rgb.options());
  return at::cat({rgb, alpha}, -1).to(at::kCPU).contiguous();
}

at::Tensor encode_rgba(const uint8_t* rgba, int width, int height) {
  const at::Tensor bytes = at::from_blob(const_cast<uint8_t*>(rgba), {height, width, 4}, at::kByte);
  return bytes.narrow(2, 0, 3).permute({2, 0, 1}).to(at::kFloat).div(127.5).sub(1.0).contiguous();
}

}  // namespace wc::rollout
