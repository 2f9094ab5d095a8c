// The decode stage: model-space frames to RGBA8 for display (pixel space: clamp and quantise).
#pragma once

#include <ATen/ATen.h>

#include <cstdint>
#include <vector>

namespace wc::rollout {

// frames [F, 3, H, W] in [−1, 1] (any device and floating dtype) -> uint8 [F, H, W, 4] on the
// CPU: round((clamp(x, −1, 1) + 1) · 127.5), alpha 255.
at::Tensor decode_rgba(const at::Tensor& frames);

// The inverse used for seeding and training data: RGBA8 bytes (alpha ignored) of one
// width x height frame -> float32 [3, H, W] in [−1, 1].
at::Tensor encode_rgba(const uint8_t* rgba, int width, int height);

}  // namespace wc::rollout
