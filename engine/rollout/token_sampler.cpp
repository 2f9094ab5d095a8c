// See token_sampler.h.
#include "engine/rollout/token_sampler.h"

#include <cmath>

#include "engine/model/tile_quarters.h"

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

at::Tensor surest_in_tile(const at::Tensor& candidate, const at::Tensor& score,
                          const PassTiles& tiles) {
  const int64_t n = score.size(-1), w = tiles.grid_w;
  TORCH_CHECK(w > 0 && n % w == 0, "surest_in_tile: ", n, " tokens in rows of ", w);
  TORCH_CHECK(tiles.quarter.dim() == 2 && tiles.quarter.size(0) == score.size(0) &&
                  tiles.quarter.size(1) == score.size(1),
              "surest_in_tile: quarters ", tiles.quarter.sizes(), " for frames ", score.sizes());
  const int64_t h = n / w;
  const auto longs = score.options().dtype(at::kLong);
  const at::Tensor place = at::arange(n, longs);
  const at::Tensor row = place.div(w, "floor"), col = place.remainder(w);
  // Note [Tile quarters]: the quarter each place shows; its tile's other places are the next row
  // or column on the side its quarter is not.
  const at::Tensor quarter =
      model::tile_quarter_rows(h, w, score.device())
          .index_select(0, tiles.quarter.to(longs).clamp_min(0).reshape({-1}))
          .view({score.size(0), score.size(1), n});
  const at::Tensor quarter_row = quarter.div(2, "floor"), quarter_col = quarter.remainder(2);
  const at::Tensor other_row = row + 1 - 2 * quarter_row, other_col = col + 1 - 2 * quarter_col;
  const at::Tensor row_in = (other_row >= 0) & (other_row < h);
  const at::Tensor col_in = (other_col >= 0) & (other_col < w);
  const at::Tensor r = other_row.clamp(0, h - 1), c = other_col.clamp(0, w - 1);
  const at::Tensor rows = row.expand_as(r), cols = col.expand_as(c);
  const at::Tensor none = at::full({}, -1.0, score.options());
  const at::Tensor masked_score = at::where(candidate, score, none);
  const auto other = [&](const at::Tensor& at_row, const at::Tensor& at_col, const at::Tensor& in) {
    return at::where(in, masked_score.gather(-1, at_row * w + at_col), none);
  };
  const at::Tensor best = at::maximum(at::maximum(other(rows, c, col_in), other(r, cols, row_in)),
                                      other(r, c, row_in & col_in));
  const at::Tensor surest = candidate & (masked_score > best);
  return at::where((tiles.quarter < 0).unsqueeze(-1), candidate, surest);
}

MaskedPass masked_pass(const at::Tensor& tokens, const at::Tensor& logits,
                       const at::Tensor& uniforms, int64_t mask_id, double temperature,
                       double top_p, double sure, double stay_share, const at::Tensor& unsure,
                       const PassTiles& tiles, const at::Tensor& first) {
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
  at::Tensor confidence =
      at::where(masked, std::get<0>(probs.max(-1)), at::full({}, 2.0f, probs.options()));
  // The places drawn first rank above every draw and count as sure.
  if (first.defined()) {
    confidence = at::where(first.to(masked.device()).view({1, 1, -1}) & masked,
                           at::full({}, 1.5f, probs.options()), confidence);
  }
  // Shown tokens count as sure; with sure = 1 no draw is.
  const at::Tensor is_sure = sure < 1.0 ? confidence >= sure : ~masked;
  MaskedPass out;
  out.unsure = unsure.defined() ? unsure : (masked & ~is_sure).sum(-1);
  const at::Tensor mask = at::full({}, mask_id, tokens.options());
  at::Tensor eligible;  // the unsure places this pass may show; undefined: all of them
  if (tiles.quarter.defined() && stay_share > 0.0) {
    // Note [Tile passes]; ties to the lower place by a tiny rank-ordered offset, in double so
    // it never reorders.
    const at::Tensor candidate = masked & ~is_sure;
    const at::Tensor place = at::arange(tokens.size(2), confidence.options().dtype(at::kDouble));
    eligible = surest_in_tile(candidate, confidence.to(at::kDouble) - place * 1e-12, tiles);
    if (unsure.defined()) {
      out.tokens = at::where(is_sure | eligible, chosen, mask);
      return out;
    }
    // The first pass's count goes to the eligible places first.
    confidence = at::where(candidate & ~eligible, confidence - 3.0f, confidence);
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
  at::Tensor shown = rank < tokens.size(2) - stay;
  if (eligible.defined()) shown = shown & (~masked | eligible);
  out.tokens = at::where(shown | is_sure, chosen, mask);
  return out;
}

}  // namespace wc::rollout
