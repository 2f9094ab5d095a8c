// See temp_cache_store.h, Note [TempCache budget], Note [TempCache matching], Note [TempCache
// bias].
#include "engine/attention/temp_cache_store.h"

#include <algorithm>
#include <cmath>

#include "engine/attention/biased_attention.h"
#include "engine/attention/temp_cache_match.h"
#include "engine/core/error.h"

namespace wc::attention {
namespace {

// Initial capacity of a store without budget or window, in frames; it doubles when full.
constexpr int64_t kUnboundedInitialFrames = 24;

}  // namespace

TempCacheStore::TempCacheStore(int batch, int groups, int row_tokens, int frames_per_block,
                               int head_dim, const at::TensorOptions& options,
                               const TempCacheSettings& settings, int64_t budget, uint64_t seed)
    : batch_(batch),
      groups_(groups),
      row_tokens_(row_tokens),
      frames_(frames_per_block),
      head_dim_(head_dim),
      options_(options),
      settings_(settings),
      budget_(budget),
      seed_(seed) {
  const int64_t rows = int64_t{batch} * groups;
  projections_ = lsh_projections(rows, head_dim, settings.lsh_bits, seed, options.device());
  const auto long_options = options.dtype(at::kLong);
  table_.sizes = at::zeros({rows}, long_options);
  table_.colocated = at::full({rows, row_tokens}, kNoEntry, long_options);
  table_.head_dim = head_dim;
  int64_t initial = kUnboundedInitialFrames * row_tokens;
  if (budget_ > 0) {
    initial = budget_ + row_tokens;
  } else if (settings.window > 0) {
    initial = (settings.window + 1) * row_tokens;
  }
  ensure_capacity(initial);
}

void TempCacheStore::ensure_capacity(int64_t needed) {
  if (needed <= table_.capacity) return;
  const int64_t old = table_.capacity;
  const int64_t cap = old == 0 ? needed : std::max(needed, 2 * old);
  const int64_t rows = int64_t{batch_} * groups_;
  const int64_t slots = cap + int64_t{frames_} * row_tokens_;
  const int64_t dp = padded_head_dim(head_dim_);
  at::Tensor keys = at::zeros({batch_, groups_, slots, dp}, options_);
  at::Tensor values = at::zeros_like(keys);
  at::Tensor bias = at::zeros({batch_, groups_, slots}, options_.dtype(at::kFloat));
  const auto meta = [&](at::ScalarType type) {
    return at::zeros({rows, cap + 1}, options_.dtype(type));
  };
  EntryTable t;
  t.counts = meta(at::kFloat);
  t.last_frame = meta(at::kLong);
  t.sink = meta(at::kBool);
  t.codes = meta(at::kLong);
  if (old > 0) {
    keys.narrow(2, 0, old).copy_(keys_.narrow(2, 0, old));
    values.narrow(2, 0, old).copy_(values_.narrow(2, 0, old));
    bias.narrow(2, 0, max_size_).copy_(bias_.narrow(2, 0, max_size_));
    t.counts.narrow(1, 0, old).copy_(table_.counts.narrow(1, 0, old));
    t.last_frame.narrow(1, 0, old).copy_(table_.last_frame.narrow(1, 0, old));
    t.sink.narrow(1, 0, old).copy_(table_.sink.narrow(1, 0, old));
    t.codes.narrow(1, 0, old).copy_(table_.codes.narrow(1, 0, old));
  }
  keys_ = keys;
  values_ = values;
  bias_ = bias;
  t.keys = keys_.view({rows, slots, dp});
  t.values = values_.view({rows, slots, dp});
  t.sizes = table_.sizes;
  t.colocated = table_.colocated;
  t.capacity = cap;
  t.head_dim = head_dim_;
  table_ = t;
}

at::Tensor TempCacheStore::attend(const at::Tensor& q, const at::Tensor& k, const at::Tensor& v) {
  const int64_t current = k.size(2);
  if (current != int64_t{frames_} * row_tokens_ || k.size(1) != groups_) {
    throw Error("tempcache store", "current block has the wrong shape");
  }
  keys_.narrow(2, max_size_, current).narrow(3, 0, head_dim_).copy_(k);
  values_.narrow(2, max_size_, current).narrow(3, 0, head_dim_).copy_(v);
  const int64_t tk = max_size_ + current;
  return biased_attention(q, keys_.narrow(2, 0, tk), values_.narrow(2, 0, tk),
                          bias_.narrow(2, 0, tk), settings_.bias_path);
}

void TempCacheStore::commit(const at::Tensor& k, const at::Tensor& v,
                            const std::vector<int64_t>& frames) {
  const int64_t rows = int64_t{batch_} * groups_;
  if (k.size(1) != groups_ || k.size(2) != static_cast<int64_t>(frames.size()) * row_tokens_) {
    throw Error("tempcache store", "commit: k/v do not hold the frames named");
  }
  for (size_t i = 0; i < frames.size(); ++i) {
    const int64_t start = static_cast<int64_t>(i) * row_tokens_;
    commit_frame(k.narrow(2, start, row_tokens_).reshape({rows, row_tokens_, head_dim_}),
                 v.narrow(2, start, row_tokens_).reshape({rows, row_tokens_, head_dim_}),
                 frames[i]);
  }
  refresh_bias();
}

void TempCacheStore::commit_frame(const at::Tensor& k, const at::Tensor& v, int64_t frame) {
  ensure_capacity(max_size_ + row_tokens_);
  const at::Tensor codes = lsh_codes(k, projections_);
  MatchInputs in;
  in.entry_keys = table_.keys;
  in.entry_codes = table_.codes;
  in.sizes = table_.sizes;
  in.colocated = table_.colocated;
  in.new_keys = k;
  in.new_codes = codes;
  in.tau = settings_.tau;
  in.bits = settings_.lsh_bits;
  in.candidates = settings_.lsh_candidates;
  const at::Tensor target = match_keys(in);
  merges_ += apply_frame(table_, k, v, codes, target, frame, frame < frames_);
  frames_committed_ = frame + 1;
  enforce_limits(frames_committed_);
  max_size_ = table_.sizes.max().item<int64_t>();
}

void TempCacheStore::enforce_limits(int64_t frames_committed) {
  if (settings_.window > 0) {
    const int64_t oldest = frames_committed - (settings_.window - frames_);
    const at::Tensor slots = at::arange(table_.capacity, table_.sizes.options()).unsqueeze(0);
    const at::Tensor drop =
        slots.lt(table_.sizes.unsqueeze(1))
            .logical_and(table_.sink.narrow(1, 0, table_.capacity).logical_not())
            .logical_and(table_.last_frame.narrow(1, 0, table_.capacity).lt(oldest));
    evictions_ += drop_entries(table_, drop);
  }
  if (budget_ > 0 && table_.sizes.max().item<int64_t>() > budget_) {
    if (settings_.budget_rule == BudgetRule::kEvictOldest) {
      evictions_ += drop_entries(table_, oldest_beyond_budget(table_, budget_));
    } else {
      merges_ += merge_closest_beyond_budget(table_, budget_);
    }
  }
}

void TempCacheStore::refresh_bias() {
  const int64_t rows = int64_t{batch_} * groups_;
  const int64_t current = int64_t{frames_} * row_tokens_;
  const int64_t span = max_size_ + current;
  const int64_t slots_total = keys_.size(2);
  const at::Tensor slots =
      at::arange(span, table_.sizes.options()).unsqueeze(0).expand({rows, span});
  const at::Tensor held = slots.lt(table_.sizes.unsqueeze(1));
  const at::Tensor in_history = slots.lt(max_size_);
  const at::Tensor counts = at::cat(
      {table_.counts.narrow(1, 0, max_size_), at::ones({rows, current}, table_.counts.options())},
      1);
  const at::Tensor bias = at::where(held, counts.clamp_min(1.0f).log(),
                                    at::where(in_history, at::full({}, kPadBias, counts.options()),
                                              at::zeros({}, counts.options())));
  bias_.view({rows, slots_total}).narrow(1, 0, span).copy_(bias);
  at::Tensor keys = keys_.view({rows, slots_total, -1}).narrow(1, 0, span);
  at::Tensor values = values_.view({rows, slots_total, -1}).narrow(1, 0, span);
  const at::Tensor unused = held.logical_not().unsqueeze(-1);
  keys.masked_fill_(unused, 0);
  values.masked_fill_(unused, 0);
  write_bias_dims(keys, bias, head_dim_);
}

void TempCacheStore::reconfigure(const TempCacheSettings& settings, int64_t budget) {
  const bool bits_changed = settings.lsh_bits != settings_.lsh_bits;
  settings_ = settings;
  budget_ = budget;
  if (bits_changed) {
    const int64_t rows = int64_t{batch_} * groups_;
    projections_ = lsh_projections(rows, head_dim_, settings.lsh_bits, seed_, options_.device());
    table_.codes.narrow(1, 0, table_.capacity)
        .copy_(lsh_codes(table_.keys.narrow(1, 0, table_.capacity).narrow(2, 0, head_dim_),
                         projections_));
  }
  if (budget_ > 0) ensure_capacity(budget_ + row_tokens_);
  enforce_limits(frames_committed_);
  max_size_ = table_.sizes.max().item<int64_t>();
  refresh_bias();
}

std::vector<int64_t> TempCacheStore::entries_per_group() const {
  const at::Tensor sums = table_.sizes.view({batch_, groups_}).sum(0).cpu();
  return std::vector<int64_t>(sums.data_ptr<int64_t>(), sums.data_ptr<int64_t>() + groups_);
}

std::vector<double> TempCacheStore::count_sum_per_group() const {
  const at::Tensor sums = table_.counts.sum(1).to(at::kDouble).view({batch_, groups_}).sum(0).cpu();
  return std::vector<double>(sums.data_ptr<double>(), sums.data_ptr<double>() + groups_);
}

int64_t TempCacheStore::bytes_per_entry() const {
  return 2 * padded_head_dim(head_dim_) * static_cast<int64_t>(options_.dtype().itemsize());
}

TempCacheStore::Entries TempCacheStore::entries(int row) const {
  const int64_t size = table_.sizes[row].item<int64_t>();
  Entries e;
  e.keys = table_.keys[row].narrow(0, 0, size).narrow(1, 0, head_dim_).to(at::kFloat).cpu();
  e.values = table_.values[row].narrow(0, 0, size).narrow(1, 0, head_dim_).to(at::kFloat).cpu();
  e.counts = table_.counts[row].narrow(0, 0, size).cpu();
  e.last_frame = table_.last_frame[row].narrow(0, 0, size).cpu();
  e.sink = table_.sink[row].narrow(0, 0, size).cpu();
  return e;
}

}  // namespace wc::attention
