// See overlay_damage.h.
#include "engine/train/overlay_damage.h"

#include <ATen/CPUGeneratorImpl.h>

#include <algorithm>

#include "engine/model/model_config.h"
#include "engine/model/prediction.h"

namespace wc::train {

OverlayDamage damage_overlays(const at::Tensor& history, const at::Tensor& overlay, int move_pixels,
                              double share, int frames_per_block, uint64_t seed) {
  const int64_t b = history.size(0), f = history.size(1), h = history.size(3), w = history.size(4);
  const int64_t fpb = frames_per_block;
  // The first damaged frame comes after the sink, and some later block must read it.
  const int64_t earliest = fpb, latest = f - fpb - 1;
  at::Generator generator = at::detail::createCPUGenerator(seed);
  const auto real = at::TensorOptions().dtype(at::kFloat);
  const auto whole = at::TensorOptions().dtype(at::kLong);
  const at::Tensor chosen = (at::rand({b}, generator, real) < share) & (latest >= earliest);
  const at::Tensor first =
      at::randint(earliest, std::max(earliest, latest) + 1, {b}, generator, whole);
  const at::Tensor rate = (1 - at::rand({b, 1, 1}, generator, real)) * kMaxDamageShare;
  const at::Tensor move =
      at::randint(1, model::PredictionConfig::kMoves, {b, 1, 1, h, w}, generator, whole);
  const at::Tensor pixels = (at::rand({b, h, w}, generator, real) < rate) &
                            overlay.to(at::kCPU).view({1, h, w}) & chosen.view({b, 1, 1});

  OverlayDamage out;
  out.damaged = pixels.flatten(1).any(1);
  out.first = at::where(out.damaged, first, at::full({b}, -1, whole));
  out.pixels = pixels;
  if (!out.damaged.any().item<bool>()) {
    out.history = history;
    return out;
  }
  // What each damaged pixel shows from frame k on: frame k moved by its move.
  const at::Device device = history.device();
  const at::Tensor frame_k = history.index({at::arange(b, whole.device(device)), first.to(device)})
                                 .unsqueeze(1);                          // [B, 1, C, H, W]
  const at::Tensor choices = model::move_choices(frame_k, move_pixels);  // [B, 1, 5, C, H, W]
  const at::Tensor index = move.to(device).unsqueeze(3).expand({b, 1, 1, history.size(2), h, w});
  const at::Tensor shown = choices.gather(2, index).squeeze(2).to(history.dtype());
  const at::Tensor from_k = at::arange(f, whole).view({1, f}) >= out.first.view({b, 1});
  const at::Tensor where =
      (from_k & out.damaged.view({b, 1})).view({b, f, 1, 1, 1}) & pixels.view({b, 1, 1, h, w});
  out.history = at::where(where.to(device), shown, history);
  return out;
}

}  // namespace wc::train
