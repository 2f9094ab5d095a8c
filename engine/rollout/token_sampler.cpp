// See token_sampler.h.
#include "engine/rollout/token_sampler.h"

#include <cmath>

namespace wc::rollout {

double stay_share(int pass, int passes) {
  if (pass + 1 >= passes) return 0.0;
  return std::cos(M_PI / 2.0 * static_cast<double>(pass + 1) / passes);
}

at::Tensor token_uniforms(const at::Tensor& noise, int passes, int64_t tokens) {
  const int64_t frames = noise.size(1);
  const at::Tensor z = noise.to(at::kFloat).reshape({1, frames, -1});
  TORCH_CHECK(z.size(2) >= passes * tokens, "token_uniforms: ", z.size(2),
              " noise values a frame for ", passes, " passes of ", tokens, " tokens");
  const at::Tensor u = 0.5 * (1.0 + at::erf(z.slice(2, 0, passes * tokens) * M_SQRT1_2));
  // Strictly below 1, so the draw below never runs past the last token.
  return u.clamp(0.0, 1.0 - 1e-7).view({1, frames, passes, tokens}).permute({2, 0, 1, 3});
}

at::Tensor draw_by_cdf(const at::Tensor& probs, const at::Tensor& uniforms) {
  const at::Tensor cdf = probs.cumsum(-1);
  const at::Tensor target =
      (uniforms.to(at::kFloat) * cdf.select(-1, cdf.size(-1) - 1)).unsqueeze(-1);
  return at::searchsorted(cdf.contiguous(), target.contiguous(), /*out_int32=*/false,
                          /*right=*/true)
      .clamp_max(cdf.size(-1) - 1)
      .squeeze(-1);
}

MaskedPass masked_pass(const at::Tensor& tokens, const at::Tensor& logits,
                       const at::Tensor& uniforms, int64_t mask_id, double temperature,
                       double top_p, double sure, double stay_share, const at::Tensor& unsure,
                       int64_t spread_grid_w) {
  at::Tensor probs = at::softmax(logits.to(at::kFloat) / temperature, -1);
  if (top_p < 1.0) {
    const auto [sorted, order] = probs.sort(-1, /*descending=*/true);
    // A token is kept while the mass before it is below top_p (the likeliest always is).
    const at::Tensor before = sorted.cumsum(-1) - sorted;
    probs = at::zeros_like(probs).scatter(-1, order,
                                          sorted * (before < top_p).to(sorted.scalar_type()));
  }
  const at::Tensor masked = tokens == mask_id;
  const at::Tensor chosen = at::where(masked, draw_by_cdf(probs, uniforms), tokens);
  // How sure the model is of each place: its likeliest token's probability, whatever was drawn
  // there (Note [Masked sampling]); shown tokens score above any, so they stay shown.
  const at::Tensor confidence =
      at::where(masked, std::get<0>(probs.max(-1)), at::full({}, 2.0f, probs.options()));
  // Shown tokens count as sure; with sure = 1 no draw is.
  const at::Tensor is_sure = sure < 1.0 ? confidence >= sure : ~masked;
  MaskedPass out;
  out.unsure = unsure.defined() ? unsure : (masked & ~is_sure).sum(-1);
  if (spread_grid_w > 0 && stay_share > 0.0) {
    // Note [Spread passes]: the unsure places surest in their 3x3 neighbourhood of unsure places,
    // ties to the lower place (a tiny rank-ordered offset, in double so it never reorders).
    const int64_t n = tokens.size(2);
    TORCH_CHECK(n % spread_grid_w == 0, "masked_pass: ", n, " tokens in rows of ", spread_grid_w);
    const at::Tensor candidate = masked & ~is_sure;
    const at::Tensor place = at::arange(n, confidence.options().dtype(at::kDouble));
    const at::Tensor score = at::where(candidate, confidence.to(at::kDouble) - place * 1e-12,
                                       at::full({}, -1.0, place.options()));
    const at::Tensor grid = score.reshape({-1, 1, n / spread_grid_w, spread_grid_w});
    const at::Tensor best = at::max_pool2d(grid, {3, 3}, {1, 1}, {1, 1}).view_as(score);
    const at::Tensor local = candidate & (score >= best);
    out.tokens = at::where(is_sure | local, chosen, at::full({}, mask_id, tokens.options()));
    return out;
  }
  // Each place's rank by confidence (stable: ties go to the lower place), and how many the
  // pass shows: all but floor(unsure·stay_share), never more than are masked now (the sure
  // ones may have run ahead of the schedule), and every sure one.
  const at::Tensor order = std::get<1>(confidence.sort(/*stable=*/true, -1, /*descending=*/true));
  const at::Tensor rank = at::empty_like(order).scatter_(
      -1, order, at::arange(order.size(-1), order.options()).expand_as(order));
  const at::Tensor stay =
      at::minimum(at::floor(out.unsure.to(at::kDouble) * stay_share).to(at::kLong), masked.sum(-1))
          .unsqueeze(-1);
  const at::Tensor shown = (rank < tokens.size(2) - stay) | is_sure;
  out.tokens = at::where(shown, chosen, at::full({}, mask_id, tokens.options()));
  return out;
}

}  // namespace wc::rollout
