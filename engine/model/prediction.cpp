// See prediction.h.
#include "engine/model/prediction.h"

#include <vector>

#include "engine/core/error.h"

namespace wc::model {

at::Tensor velocity_from_output(const PredictionConfig& prediction, const at::Tensor& output,
                                const at::Tensor& x_t, const at::Tensor& t,
                                const at::Tensor& reference) {
  if (!prediction.previous_frame_skip) return output;
  if (!reference.defined()) {
    throw Error("prediction", "the previous-frame skip needs the frame before the block");
  }
  const double s = prediction.spread;
  // t = 0 is a clean frame: its velocity is the limit, reached to float32 precision at 1e-3.
  const at::Tensor level = t.to(at::kFloat).clamp(1e-3, 1.0).view({t.size(0), t.size(1), 1, 1, 1});
  const at::Tensor a = 1.0 - level;
  const at::Tensor d = a * a * (s * s) + level * level;
  const at::Tensor k = a * (s * s) / d;
  const at::Tensor c = s * level / d.sqrt();
  const at::Tensor x = x_t.to(at::kFloat);
  const at::Tensor r = reference.to(at::kFloat);
  const at::Tensor x0 = r + k * (x - a * r) + c * output.to(at::kFloat);
  return ((x - x0) / level).to(output.scalar_type());
}

at::Tensor block_reference(const at::Tensor& before, int frames_per_block) {
  const int64_t last = before.size(1) - 1;
  return before.slice(1, last).expand({-1, frames_per_block, -1, -1, -1}).contiguous();
}

at::Tensor previous_frame_reference(const at::Tensor& frames, int frames_per_block) {
  const int64_t f = frames.size(1);
  std::vector<int64_t> index;
  for (int64_t i = frames_per_block; i < f; ++i)
    index.push_back(i / frames_per_block * frames_per_block - 1);
  return frames.index_select(1, at::tensor(index, at::kLong).to(frames.device()));
}

}  // namespace wc::model
