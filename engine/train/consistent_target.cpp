// See consistent_target.h.
#include "engine/train/consistent_target.h"

#include "engine/model/prediction.h"

namespace wc::train {
namespace {

// mask [N, H, W] moved by each of the five choices of move_choices (same order and offsets):
// [N, 5, H, W] bool, pixel p of choice j holding the mask at p + o_j; outside the frame counts as
// false (zero padding, not the repeated border).
at::Tensor moved_choices(const at::Tensor& mask, int move_pixels) {
  const int64_t m = move_pixels, h = mask.size(1), w = mask.size(2);
  const at::Tensor padded = at::constant_pad_nd(mask.to(at::kFloat), {m, m, m, m}, 0.0);
  const int64_t offsets[model::PredictionConfig::kMoves][2] = {
      {0, 0}, {-m, 0}, {m, 0}, {0, -m}, {0, m}};
  std::vector<at::Tensor> choices;
  for (const auto& o : offsets) {
    choices.push_back(padded.slice(1, m + o[0], m + o[0] + h).slice(2, m + o[1], m + o[1] + w));
  }
  return at::stack(choices, 1) > 0.5;
}

// For each of the five choices, [5, H, W] bool: the pixels whose source lies inside the frame and
// outside the overlays.
at::Tensor copied_pixels(const at::Tensor& overlay, int move_pixels) {
  return moved_choices((~overlay).unsqueeze(0), move_pixels).squeeze(0);
}

// mask [B, H, W] bool moved by each clip's choice move [B].
at::Tensor moved_mask(const at::Tensor& mask, const at::Tensor& move, int move_pixels) {
  const int64_t b = mask.size(0), h = mask.size(1), w = mask.size(2);
  const at::Tensor index = move.view({b, 1, 1, 1}).expand({b, 1, h, w});
  return moved_choices(mask, move_pixels).gather(1, index).squeeze(1);
}

// [B, F − 1, 1, H, W] bool: the pixels of each target frame whose content, followed back through
// the game's moves while frames stay adjacent, was under an overlay at some earlier frame.
at::Tensor uncovered_pixels(const at::Tensor& overlay, const at::Tensor& move,
                            const at::Tensor& adjacent, int move_pixels) {
  const int64_t b = move.size(0), frames = move.size(1);
  const at::Tensor under = overlay.unsqueeze(0).expand({b, overlay.size(0), overlay.size(1)});
  at::Tensor swept = under;  // of frame 0: what the overlays cover
  std::vector<at::Tensor> out;
  for (int64_t i = 0; i < frames; ++i) {
    const at::Tensor from_swept =
        moved_mask(swept, move.select(1, i), move_pixels) & adjacent.select(1, i).view({b, 1, 1});
    out.push_back(from_swept);
    swept = from_swept | under;
  }
  return at::stack(out, 1).unsqueeze(2);
}

}  // namespace

at::Tensor overlay_mask(int width, int height) {
  at::Tensor mask = at::zeros({height, width}, at::kBool);
  for (const game::PixelRect& r : game::screen_overlays(width, height)) {
    if (r.width > 0 && r.height > 0) {
      mask.slice(0, r.y, r.y + r.height).slice(1, r.x, r.x + r.width).fill_(true);
    }
  }
  return mask;
}

at::Tensor consistent_frames(const at::Tensor& truth, const at::Tensor& history,
                             const at::Tensor& positions, const at::Tensor& own,
                             const at::Tensor& overlay, int move_pixels, bool uncovered_from_game) {
  const int64_t b = truth.size(0), f = truth.size(1);
  const at::Tensor target = truth.slice(1, 1).to(at::kFloat);             // frames 1..
  const at::Tensor keep = (~overlay).to(target.device()).to(at::kFloat);  // [H, W]
  // The game's move between its frames f − 1 and f: the closest choice outside the overlays.
  const at::Tensor true_choices = model::move_choices(truth.slice(1, 0, f - 1), move_pixels);
  const at::Tensor error =
      ((true_choices - target.unsqueeze(2)).pow(2) * keep).sum({3, 4, 5});  // [B, F − 1, 5]
  const at::Tensor move = error.argmin(2);                                  // [B, F − 1]
  const auto pick = [&](const at::Tensor& choices, int64_t channels) {
    // [B, F − 1, 5, c, H, W] -> the game's move for each frame: [B, F − 1, c, H, W]
    const at::Tensor index = move.view({b, f - 1, 1, 1, 1, 1})
                                 .expand({b, f - 1, 1, channels, choices.size(4), choices.size(5)});
    return choices.gather(2, index).squeeze(2);
  };
  const at::Tensor moved_own =
      pick(model::move_choices(history.slice(1, 0, f - 1), move_pixels), target.size(2));
  const at::Tensor copied_by_move = copied_pixels(overlay, move_pixels).to(target.device());
  // [B, F − 1, 1, H, W]: copied pixels of each frame's move, and never an overlay pixel itself.
  const at::Tensor copied = copied_by_move.index_select(0, move.flatten())
                                .view({b, f - 1, 1, overlay.size(0), overlay.size(1)}) &
                            ~overlay.to(target.device());
  const at::Tensor adjacent = (positions.slice(1, 1) == positions.slice(1, 0, f - 1) + 1)
                                  .to(target.device());  // [B, F − 1]
  at::Tensor use =
      copied & adjacent.view({b, f - 1, 1, 1, 1}) & own.to(target.device()).view({b, 1, 1, 1, 1});
  if (uncovered_from_game) {
    use = use & ~uncovered_pixels(overlay.to(target.device()), move, adjacent, move_pixels);
  }
  return at::where(use, moved_own, target);
}

void use_consistent_target(TeacherForcingBatch& batch, const at::Tensor& frames) {
  const int64_t first = batch.noisy_first;
  const at::Tensor x_t = batch.input.frames.slice(1, first);
  const at::Tensor t = batch.input.t.slice(1, first);
  const at::Tensor level = t.view({t.size(0), t.size(1), 1, 1, 1}).to(x_t.dtype());
  const at::Tensor x0 = batch.clean.slice(1, batch.clean.size(1) - frames.size(1));
  const at::Tensor eps = batch.target + x0;  // the target is ε − x0
  const at::Tensor target_frames = frames.to(x0.dtype());
  batch.input.frames = at::cat(
      {batch.input.frames.slice(1, 0, first), (1 - level) * target_frames + level * eps}, 1);
  batch.target = eps - target_frames;
  batch.clean =
      at::cat({batch.clean.slice(1, 0, batch.clean.size(1) - frames.size(1)), target_frames}, 1);
}

}  // namespace wc::train
