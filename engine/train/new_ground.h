// Training the paint choices alone, for new ground (Note [New ground] in
// engine/model/prediction.h). See Note [New ground likelihood].
#pragma once

#include <ATen/ATen.h>

#include <string>
#include <vector>

#include "engine/model/dit.h"

namespace wc::train {

// Note [New ground likelihood]
// Play with `move_choice: "new_ground"` paints only the pixels whose likeliest move reaches past
// the frame's border, drawn from the softmax of the paint logits alone. So that is what this
// loss trains, and nothing else: the negative log-likelihood, under the paints' own softmax, of
// the true pixel's colour at the pixels the model's own likeliest move (at the level it is
// trained at) takes from past the border. The mask is the model's, not the game's camera: where
// it moves, play paints, whether or not the game moved (a blocked walk it mistook for a scroll
// teaches the paints the unmoved edge, which is what the game shows there). Trained with
// `"learn": "new_ground"` every weight but the head's paint rows stays as loaded (FrozenWeights),
// so the model plays everywhere else exactly as the one it grew from (`--grow-head`), and the
// paint rows are a linear read of the features the frozen network already computes for the edge
// (what the correction drew as the mean). Every frame trained on is made of palette colours, so a
// pixel's colour is one paint (two paints of one colour both count); a pixel of no paint's colour
// is left out.

// The mean over the new-ground pixels of `logits` ([B, F, 5 + K, H, W], moves then paints) of
// −log Σ softmax(paint logits)_k over the paints k of `target`'s colour (target [B, F, C, H, W] in
// [−1, 1], paint [K, C]), float32. 0 where no pixel is new ground. Given the frame the moves
// read (`uncovered_in`, like target), new ground includes the ground a still thing uncovers, as
// play paints it (Note [Uncovered ground]).
at::Tensor new_ground_loss(const at::Tensor& logits, const at::Tensor& target,
                           const at::Tensor& paint, int move_pixels,
                           const at::Tensor& uncovered_in = {});

// The weights a "new_ground" step may not change, and their values to restore: every parameter
// but the output head's projection, whose rows before the paint logits' are kept too. Decoupled
// weight decay and the EMA's arithmetic would otherwise move what has no gradient, so restore()
// copies them back after each step, into the parameters and their EMA alike. The constructor
// also turns off the gradient of the frozen parameters, so backward stops at the head.
class FrozenWeights {
 public:
  FrozenWeights(model::CausalDiTImpl& model, const std::vector<at::Tensor>& params);
  // Zeroes the gradient of the kept rows (before clipping, so the clip sees the paints alone).
  void mask_gradients() const;
  void restore(const std::vector<at::Tensor>& params, const std::vector<at::Tensor>& ema) const;

 private:
  struct Kept {
    size_t index;       // into the parameter list
    int64_t rows;       // leading rows kept; -1: the whole tensor
    at::Tensor values;  // the kept values
  };
  std::vector<Kept> kept_;
  std::vector<at::Tensor> head_;  // the head's parameters, whose kept rows' gradients are zeroed
  std::vector<int64_t> head_rows_;
};

}  // namespace wc::train
