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
  const int64_t channels = x_t.size(2);
  const at::Tensor correction = output.slice(2, 0, channels).to(at::kFloat);
  const at::Tensor r = prediction.move_pixels > 0
                           ? moved_reference(reference, output.slice(2, channels),
                                             prediction.move_pixels, prediction.sharpest_move)
                           : reference.to(at::kFloat);
  const at::Tensor x0 = r + k * (x - a * r) + c * correction;
  return ((x - x0) / level).to(output.scalar_type());
}

at::Tensor move_choices(const at::Tensor& previous, int move_pixels) {
  const int64_t b = previous.size(0), f = previous.size(1), ch = previous.size(2),
                h = previous.size(3), w = previous.size(4);
  const int64_t m = move_pixels;
  const at::Tensor padded =
      at::replication_pad2d(previous.to(at::kFloat).reshape({b * f, ch, h, w}), {m, m, m, m});
  // Choice j shows at pixel p the previous frame's pixel p + o_j (Note [Moved reference]).
  const int64_t offsets[PredictionConfig::kMoves][2] = {{0, 0}, {-m, 0}, {m, 0}, {0, -m}, {0, m}};
  std::vector<at::Tensor> choices;
  for (const auto& o : offsets) {
    choices.push_back(padded.slice(2, m + o[0], m + o[0] + h).slice(3, m + o[1], m + o[1] + w));
  }
  return at::stack(choices, 1).view({b, f, PredictionConfig::kMoves, ch, h, w});
}

namespace {

// Each pixel's argmax choice among `choices` ([B, F, 5, C, H, W]) by `logits` ([B, F, 5, H, W]).
at::Tensor sharpest_of(const at::Tensor& choices, const at::Tensor& logits) {
  // [B, F, 1, C, H, W] indices of each pixel's choice, gathered from the choice dimension.
  const at::Tensor pick =
      logits.argmax(2, /*keepdim=*/true).unsqueeze(3).expand({-1, -1, 1, choices.size(3), -1, -1});
  return choices.gather(2, pick).squeeze(2);
}

// The softmax mix of `choices` by `logits`, float32.
at::Tensor mix_of(const at::Tensor& choices, const at::Tensor& logits) {
  return (at::softmax(logits.to(at::kFloat), 2).unsqueeze(3) * choices).sum(2);
}

}  // namespace

at::Tensor moved_reference(const at::Tensor& previous, const at::Tensor& logits, int move_pixels,
                           bool sharpest) {
  const at::Tensor choices = move_choices(previous, move_pixels);
  return sharpest ? sharpest_of(choices, logits) : mix_of(choices, logits);
}

at::Tensor straight_through_reference(const at::Tensor& previous, const at::Tensor& logits,
                                      int move_pixels) {
  const at::Tensor choices = move_choices(previous, move_pixels);
  const at::Tensor mix = mix_of(choices, logits);
  return sharpest_of(choices, logits) + (mix - mix.detach());
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
