// See token_sampler.h.
#include "engine/rollout/token_sampler.h"

#include <algorithm>
#include <cmath>

namespace wc::rollout {

std::vector<int64_t> masked_counts(int64_t tokens, int passes) {
  std::vector<int64_t> counts(static_cast<size_t>(passes) + 1, 0);
  counts[0] = tokens;
  for (int k = 1; k < passes; ++k) {
    const double share = std::cos(M_PI / 2.0 * static_cast<double>(k) / passes);
    // Strictly fewer each pass, and room for the passes still to come.
    counts[static_cast<size_t>(k)] = std::clamp<int64_t>(
        static_cast<int64_t>(std::floor(static_cast<double>(tokens) * share)),
        static_cast<int64_t>(passes - k), counts[static_cast<size_t>(k) - 1] - 1);
  }
  return counts;
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

at::Tensor masked_pass(const at::Tensor& tokens, const at::Tensor& logits, const at::Tensor& uniforms,
                       int64_t mask_id, double temperature, double top_p, int64_t stay_masked) {
  const int64_t n = tokens.size(2);
  at::Tensor probs = at::softmax(logits.to(at::kFloat) / temperature, -1);
  if (top_p < 1.0) {
    const auto [sorted, order] = probs.sort(-1, /*descending=*/true);
    // A token is kept while the mass before it is below top_p (the likeliest always is).
    const at::Tensor before = sorted.cumsum(-1) - sorted;
    probs = at::zeros_like(probs).scatter(-1, order, sorted * (before < top_p).to(sorted.scalar_type()));
  }
  const at::Tensor cdf = probs.cumsum(-1);
  const at::Tensor target = (uniforms.to(at::kFloat) * cdf.select(-1, cdf.size(-1) - 1)).unsqueeze(-1);
  const at::Tensor drawn =
      at::searchsorted(cdf.contiguous(), target.contiguous(), /*out_int32=*/false, /*right=*/true)
          .clamp_max(cdf.size(-1) - 1);
  const at::Tensor masked = tokens == mask_id;
  const at::Tensor chosen = at::where(masked, drawn.squeeze(-1), tokens);
  if (stay_masked <= 0) return chosen;
  // Shown tokens score above any probability, so they stay shown.
  const at::Tensor confidence =
      at::where(masked, probs.gather(-1, drawn).squeeze(-1), at::full({}, 2.0f, probs.options()));
  const at::Tensor shown_index = std::get<1>(confidence.topk(n - stay_masked, -1));
  const at::Tensor shown = at::zeros_like(masked).scatter(-1, shown_index, true);
  return at::where(shown, chosen, at::full({}, mask_id, tokens.options()));
}

}  // namespace wc::rollout
