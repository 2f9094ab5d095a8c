// See new_ground.h.
#include "engine/train/new_ground.h"

#include "engine/core/error.h"
#include "engine/model/prediction.h"
#include "engine/train/choice_likelihood.h"

namespace wc::train {

at::Tensor new_ground_loss(const at::Tensor& logits, const at::Tensor& target,
                           const at::Tensor& paint, int move_pixels,
                           const at::Tensor& uncovered_in) {
  constexpr int64_t moves = model::PredictionConfig::kMoves;
  if (!paint.defined() || logits.size(2) != moves + paint.size(0)) {
    throw Error("new ground", "the output has " + std::to_string(logits.size(2) - moves) +
                                  " paint choices but " +
                                  std::to_string(paint.defined() ? paint.size(0) : 0) +
                                  " paint colours were given (Note [New ground likelihood])");
  }
  const at::Tensor shows = showing_paints(target, paint);
  const at::Tensor scored =
      model::new_ground_pixels(logits.detach(), move_pixels, uncovered_in) & shows.any(2);
  return showing_nll(logits.slice(2, moves), shows, scored).sum() / scored.sum().clamp_min(1);
}

FrozenWeights::FrozenWeights(model::CausalDiTImpl& model, const std::vector<at::Tensor>& params) {
  const model::ModelConfig& c = model.config();
  const int64_t paint = c.prediction.paint_colours;
  if (paint == 0 || c.prediction.move_pixels == 0) {
    throw Error(c.name,
                "learning new ground trains the paint choices: the model config needs "
                "moves and \"paint\": true (Note [New ground likelihood])");
  }
  // The head's outputs per token are [output channels, patch pixels]: the paints come last.
  const int64_t per_channel = int64_t{c.patch_t} * c.patch_h * c.patch_w;
  const int64_t kept_rows = (c.output_channels() - paint) * per_channel;
  at::NoGradGuard no_grad;
  for (const auto& item : model.named_parameters(/*recurse=*/true)) {
    size_t index = params.size();
    for (size_t i = 0; i < params.size(); ++i) {
      if (params[i].is_same(item.value())) index = i;
    }
    if (index == params.size())
      throw Error(c.name, "parameter '" + item.key() + "' is not trained");
    at::Tensor p = item.value();
    if (item.key().rfind("head.proj.", 0) == 0) {
      kept_.push_back({index, kept_rows, p.slice(0, 0, kept_rows).clone()});
      head_.push_back(p);
      head_rows_.push_back(kept_rows);
    } else {
      kept_.push_back({index, -1, p.clone()});
      p.requires_grad_(false);
    }
  }
}

void FrozenWeights::mask_gradients() const {
  at::NoGradGuard no_grad;
  for (size_t i = 0; i < head_.size(); ++i) {
    if (head_[i].grad().defined()) head_[i].mutable_grad().slice(0, 0, head_rows_[i]).zero_();
  }
}

void FrozenWeights::restore(const std::vector<at::Tensor>& params,
                            const std::vector<at::Tensor>& ema) const {
  at::NoGradGuard no_grad;
  for (const Kept& k : kept_) {
    for (const std::vector<at::Tensor>* list : {&params, &ema}) {
      at::Tensor target = (*list)[k.index];
      (k.rows < 0 ? target : target.slice(0, 0, k.rows)).copy_(k.values);
    }
  }
}

}  // namespace wc::train
