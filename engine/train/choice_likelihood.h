// The likelihood loss of a moved reference's choice. See Note [Choice likelihood].
#pragma once

#include <ATen/ATen.h>

namespace wc::train {

// Note [Choice likelihood]
// Play draws each pixel's choice among the five moves and the K paint colours (Note [Painted
// pixels] in engine/model/prediction.h), so the softmax must be that choice's distribution, not
// a weight for a mix. The squared error of the mix (Note [Reference loss]) or of the velocity
// through it trains the mix to the mean, which for ground nobody has seen is a blend no draw
// shows. This loss is the negative log-likelihood of the target pixel: −log Σ p_j over the
// choices j that show it (a move whose moved previous pixel equals it, a paint of its colour; a
// still pixel that a move also explains counts both). Every frame the model trains on is made of
// palette colours (the game's own; its rollouts are snapped), so "equals" is within a quarter of
// one byte step. A pixel no choice shows (a model config without the colour) is left out.
// Trained with it (`loss.choice_weight` > 0) the velocity loss sees each pixel's likeliest choice
// with no gradient into the logits, and the correction learns what remains. Trained on the
// likelihood alone, the first painted model's moves got worse (its argmax play left the sprite's
// trail again), so the reference loss (Note [Reference loss]) may be kept beside it: with paint
// choices it scores the mix of the five moves by their own softmax, which the paints do not
// enter.

// Which of the colours `paint` ([K, C]) show `target`'s pixel ([B, F, K, H, W] bool), for frames
// [B, F, C, H, W] in [−1, 1].
at::Tensor showing_paints(const at::Tensor& target, const at::Tensor& paint);

// Which choices show `target`'s pixel ([B, F, 5 + K, H, W] bool): the moves of `previous` and
// the colours `paint` ([K, C] or undefined), for frames [B, F, C, H, W] in [−1, 1].
at::Tensor showing_choices(const at::Tensor& previous, const at::Tensor& target,
                           const at::Tensor& paint, int move_pixels);

// Each pixel's −log Σ_{j shows} softmax(logits)_j ([B, F, H, W], float32) for logits and `shows`
// [B, F, J, H, W], at the pixels `scored` ([B, F, H, W] bool) and exactly 0, with a zero gradient,
// elsewhere. A scored pixel needs a showing choice.
at::Tensor showing_nll(const at::Tensor& logits, const at::Tensor& shows, const at::Tensor& scored);

// The mean over the pixels some choice shows of −log Σ_{j shows} softmax(logits)_j, float32
// (logits [B, F, 5 + K, H, W]).
at::Tensor choice_likelihood_loss(const at::Tensor& logits, const at::Tensor& previous,
                                  const at::Tensor& target, const at::Tensor& paint,
                                  int move_pixels);

}  // namespace wc::train
