// See choice_likelihood.h.
#include "engine/train/choice_likelihood.h"

#include <limits>

#include "engine/core/error.h"
#include "engine/model/prediction.h"

namespace wc::train {
namespace {

// A quarter of one byte step in [−1, 1] frames: palette colours differ by at least one step.
constexpr double kSameColour = 0.25 * 2.0 / 255.0;

}  // namespace

at::Tensor showing_choices(const at::Tensor& previous, const at::Tensor& target,
                           const at::Tensor& paint, int move_pixels) {
  const at::Tensor goal = target.to(at::kFloat);
  // [B, F, 5, C, H, W] against [B, F, 1, C, H, W]: every channel must agree.
  const at::Tensor moves =
      (model::move_choices(previous, move_pixels) - goal.unsqueeze(2)).abs().amax(3) < kSameColour;
  if (!paint.defined()) return moves;
  return at::cat({moves, showing_paints(target, paint)}, 2);
}

at::Tensor showing_paints(const at::Tensor& target, const at::Tensor& paint) {
  const at::Tensor goal = target.to(at::kFloat);
  // [K, C] against [B, F, 1, C, H, W] → [B, F, K, H, W].
  const at::Tensor colours =
      paint.to(goal.device(), at::kFloat).view({1, 1, -1, goal.size(2), 1, 1});
  return (colours - goal.unsqueeze(2)).abs().amax(3) < kSameColour;
}

at::Tensor choice_likelihood_loss(const at::Tensor& logits, const at::Tensor& previous,
                                  const at::Tensor& target, const at::Tensor& paint,
                                  int move_pixels) {
  const at::Tensor shows = showing_choices(previous, target, paint, move_pixels);
  if (shows.size(2) != logits.size(2)) {
    throw Error("choice likelihood", "the output has " + std::to_string(logits.size(2)) +
                                         " choices but there are " + std::to_string(shows.size(2)) +
                                         " to score");
  }
  const at::Tensor scored = shows.any(2);
  return showing_nll(logits, shows, scored).sum() / scored.sum().clamp_min(1);
}

at::Tensor showing_nll(const at::Tensor& logits, const at::Tensor& shows,
                       const at::Tensor& scored) {
  const at::Tensor l = logits.to(at::kFloat);
  const double lowest = -std::numeric_limits<float>::infinity();
  // A pixel left out counts every choice as showing it: its term is exactly 0 with a zero
  // gradient (masking all its logits to −inf would put NaN into the backward pass instead).
  const at::Tensor counted = shows.logical_or(scored.logical_not().unsqueeze(2));
  return at::logsumexp(l, 2) - at::logsumexp(l.masked_fill(counted.logical_not(), lowest), 2);
}

}  // namespace wc::train
