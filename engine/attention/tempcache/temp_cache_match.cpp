// See temp_cache_match.h and Note [TempCache matching].
#include "engine/attention/tempcache/temp_cache_match.h"

#include <ATen/CPUGeneratorImpl.h>

#include <limits>

namespace wc::attention {
namespace {

// Bucket codes (< 2^16 + 1) sit above the insertion order (< 2^46) in one int64 sort key.
constexpr int64_t kCodeUnit = int64_t{1} << 46;

at::Tensor unit(const at::Tensor& x) {
  const at::Tensor xf = x.to(at::kFloat);
  return xf / xf.norm(2, {-1}, true).clamp_min(1e-12);
}

}  // namespace

at::Tensor lsh_projections(int64_t rows, int64_t head_dim, int bits, uint64_t seed,
                           const at::Device& device) {
  at::Generator gen = at::make_generator<at::CPUGeneratorImpl>(seed);
  return at::randn({rows, head_dim, std::max(bits, 1)}, gen, at::TensorOptions().dtype(at::kFloat))
      .narrow(2, 0, bits)
      .to(device);
}

at::Tensor lsh_codes(const at::Tensor& keys, const at::Tensor& projections) {
  const int64_t bits = projections.size(2);
  const auto long_options = keys.options().dtype(at::kLong);
  if (bits == 0) return at::zeros({keys.size(0), keys.size(1)}, long_options);
  const at::Tensor signs = at::bmm(keys.to(at::kFloat), projections).gt(0).to(at::kLong);
  const at::Tensor weights = at::pow(2, at::arange(bits, long_options));
  return signs.mul(weights).sum(-1);
}

at::Tensor match_keys(const MatchInputs& in) {
  const int64_t rows = in.new_keys.size(0);
  const int64_t n = in.new_keys.size(1);
  const int64_t d = in.new_keys.size(2);
  const int64_t capacity = in.capacity;
  const auto long_options = in.new_keys.options().dtype(at::kLong);
  const at::Tensor none = at::full({rows, n}, kNoEntry, long_options);
  if (in.tau >= 1.0) return none;
  const at::Tensor keys = unit(in.new_keys);  // [R, N, D]
  const at::Tensor entries = in.entry_keys.narrow(1, 0, capacity).narrow(2, 0, d);
  const at::Tensor valid = in.entry_valid.narrow(1, 0, capacity);
  const at::Tensor inv_norm =
      in.entry_inv_norm.defined()
          ? in.entry_inv_norm.narrow(1, 0, capacity)
          : entries.to(at::kFloat).norm(2, {-1}).clamp_min(1e-12).reciprocal();

  // 1. The co-located entry, if it still exists.
  const at::Tensor co_index = in.colocated.clamp_min(0);
  const at::Tensor co_keys =
      entries.gather(1, co_index.unsqueeze(-1).expand({rows, n, d})).to(at::kFloat);
  const at::Tensor co_cosine = (co_keys * keys).sum(-1) * inv_norm.gather(1, co_index);
  const at::Tensor co_ok =
      in.colocated.ge(0).logical_and(valid.gather(1, co_index)).logical_and(co_cosine.ge(in.tau));
  const at::Tensor target = at::where(co_ok, co_index, none);
  if (in.bits == 0) return target;

  // 2. The newest entries of the key's bucket: sort entries by (code, seq); free slots last.
  const int64_t no_code = int64_t{1} << in.bits;
  const at::Tensor sort_key =
      in.entry_codes.narrow(1, 0, capacity).masked_fill(valid.logical_not(), no_code) * kCodeUnit +
      in.entry_seq.narrow(1, 0, capacity).masked_fill(valid.logical_not(), 0);
  const auto sorted = sort_key.sort(1);
  const at::Tensor sorted_keys = std::get<0>(sorted).contiguous();
  const at::Tensor order = std::get<1>(sorted);
  const at::Tensor lo = at::searchsorted(sorted_keys, (in.new_codes * kCodeUnit).contiguous());
  const at::Tensor hi =
      at::searchsorted(sorted_keys, ((in.new_codes + 1) * kCodeUnit).contiguous());
  const int64_t s = in.candidates;
  const at::Tensor offsets = at::arange(1, s + 1, long_options).view({1, 1, s});
  const at::Tensor position = hi.unsqueeze(-1) - offsets;  // [R, N, S], newest first
  const at::Tensor cand_valid = position.ge(lo.unsqueeze(-1));
  const at::Tensor cand_slot = order.gather(1, position.clamp_min(0).view({rows, n * s}));
  const at::Tensor cand_keys =
      entries.gather(1, cand_slot.unsqueeze(-1).expand({rows, n * s, d})).to(at::kFloat);
  const at::Tensor cosine =
      ((cand_keys.view({rows, n, s, d}) * keys.unsqueeze(2)).sum(-1) *
       inv_norm.gather(1, cand_slot).view({rows, n, s}))
          .masked_fill(cand_valid.logical_not(), -std::numeric_limits<float>::infinity());
  const auto best = cosine.max(-1);
  const at::Tensor best_slot =
      cand_slot.view({rows, n, s}).gather(2, std::get<1>(best).unsqueeze(-1)).squeeze(-1);
  const at::Tensor lsh_ok = std::get<0>(best).ge(in.tau);
  return at::where(co_ok, target, at::where(lsh_ok, best_slot, none));
}

}  // namespace wc::attention
