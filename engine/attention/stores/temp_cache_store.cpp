// See temp_cache_store.h, Note [TempCache budget], Note [TempCache slots], Note [TempCache
// matching], Note [TempCache bias]. The per-block path (attend, commit) never reads a device value
// on the host; inspection lives in temp_cache_store_inspect.cpp.
#include "engine/attention/stores/temp_cache_store.h"

#include <algorithm>
#include <cstring>

#include "engine/attention/biased_attention.h"
#include "engine/attention/tempcache/temp_cache_match.h"
#include "engine/core/error.h"

namespace wc::attention {
namespace {

// Initial history capacity of a store without budget or window, in frames; it doubles when full.
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
  table_.colocated = at::full({rows, row_tokens}, kNoEntry, long_options);
  table_.merges = at::zeros({}, long_options);
  table_.evictions = at::zeros({}, long_options);
  frame_ = at::zeros({}, long_options);
  table_.head_dim = head_dim;
  limit_ = limit_for(settings, budget);
  const int64_t block = int64_t{frames_} * row_tokens_;
  resize(limit_ > 0 ? limit_ + block : std::max(kUnboundedInitialFrames * row_tokens_, 2 * block));
}

int64_t TempCacheStore::limit_for(const TempCacheSettings& settings, int64_t budget) const {
  int64_t limit = budget;
  if (settings.window > 0) {
    const int64_t window = settings.window * row_tokens_;
    limit = limit > 0 ? std::min(limit, window) : window;
  }
  return limit;
}

void TempCacheStore::resize(int64_t capacity) {
  const int64_t old = table_.capacity;
  const int64_t kept = std::min(old, capacity);
  const int64_t rows = int64_t{batch_} * groups_;
  const int64_t slots = capacity + 1;
  const int64_t dp = padded_head_dim(head_dim_);
  at::Tensor keys = at::zeros({batch_, groups_, slots, dp}, options_);
  at::Tensor values = at::zeros_like(keys);
  const auto meta = [&](at::ScalarType type) {
    return at::zeros({rows, slots}, options_.dtype(type));
  };
  EntryTable t = table_;
  t.counts = meta(at::kFloat);
  t.last_frame = meta(at::kLong);
  t.seq = meta(at::kLong);
  t.sink = meta(at::kBool);
  t.valid = meta(at::kBool);
  t.codes = meta(at::kLong);
  t.inv_norm = meta(at::kFloat);
  if (kept > 0) {
    keys.narrow(2, 0, kept).copy_(keys_.narrow(2, 0, kept));
    values.narrow(2, 0, kept).copy_(values_.narrow(2, 0, kept));
    for (auto [to, from] :
         {std::pair{&t.counts, &table_.counts}, std::pair{&t.last_frame, &table_.last_frame},
          std::pair{&t.seq, &table_.seq}, std::pair{&t.sink, &table_.sink},
          std::pair{&t.valid, &table_.valid}, std::pair{&t.codes, &table_.codes},
          std::pair{&t.inv_norm, &table_.inv_norm}}) {
      to->narrow(1, 0, kept).copy_(from->narrow(1, 0, kept));
    }
    t.colocated = t.colocated.masked_fill(t.colocated.ge(capacity), kNoEntry);
  }
  keys_ = keys;
  values_ = values;
  t.keys = keys_.view({rows, slots, dp});
  t.values = values_.view({rows, slots, dp});
  t.capacity = capacity;
  table_ = t;
  bias_ = resolve_bias_path(settings_.bias_path, options_.device()) == BiasPath::kExtraDim
              ? at::Tensor()
              : at::zeros({batch_, groups_, slots}, options_.dtype(at::kFloat));
  span_ = std::min(span_, capacity);
  refresh_bias();
}

at::Tensor TempCacheStore::attend(const at::Tensor& q, const at::Tensor& k, const at::Tensor& v) {
  const int64_t current = k.size(2);
  if (current != int64_t{frames_} * row_tokens_ || k.size(1) != groups_) {
    throw Error("tempcache store", "current block has the wrong shape");
  }
  // Slots [span, span + current) are free at this point (Note [TempCache slots]); their bias is 0.
  keys_.narrow(2, span_, current).narrow(3, 0, head_dim_).copy_(k);
  values_.narrow(2, span_, current).narrow(3, 0, head_dim_).copy_(v);
  const int64_t tk = span_ + current;
  return biased_attention(q, keys_.narrow(2, 0, tk), values_.narrow(2, 0, tk),
                          bias_.defined() ? bias_.narrow(2, 0, tk) : at::Tensor(),
                          settings_.bias_path);
}

void TempCacheStore::commit(const at::Tensor& k, const at::Tensor& v,
                            const std::vector<int64_t>& frames) {
  const int64_t rows = int64_t{batch_} * groups_;
  if (k.size(1) != groups_ || k.size(2) != static_cast<int64_t>(frames.size()) * row_tokens_) {
    throw Error("tempcache store", "commit: k/v do not hold the frames named");
  }
  for (size_t i = 0; i < frames.size(); ++i) {
    // More frames than one block at once (a take-over replay), or an unbounded store: make room.
    if (span_ + row_tokens_ > table_.capacity) {
      if (limit_ > 0) {
        enforce_limits();
      } else {
        resize(std::max(2 * table_.capacity, span_ + int64_t{frames_ + 1} * row_tokens_));
      }
    }
    if (frames[i] != device_frame_) frame_.fill_(frames[i]);
    const int64_t start = static_cast<int64_t>(i) * row_tokens_;
    commit_frame(k.narrow(2, start, row_tokens_).reshape({rows, row_tokens_, head_dim_}),
                 v.narrow(2, start, row_tokens_).reshape({rows, row_tokens_, head_dim_}),
                 frames[i] < frames_);
    device_frame_ = frames[i] + 1;
    frames_committed_ = frames[i] + 1;
    span_ += row_tokens_;  // at most one frame's worth of appends
  }
  enforce_limits();
  const int64_t block = int64_t{frames_} * row_tokens_;
  if (span_ + block > table_.capacity) {
    resize(std::max(2 * table_.capacity, span_ + block));  // unbounded stores only
  } else {
    refresh_bias();
  }
}

bool TempCacheStore::commit_keeps_layout() const {
  // A bounded store whose span has reached its limit past the sink block: commit() then appends
  // into the block's spare slots, enforces the limit back to the same span and never resizes.
  return limit_ > 0 && span_ == limit_ &&
         table_.capacity == limit_ + int64_t{frames_} * row_tokens_ &&
         frames_committed_ >= frames_ && device_frame_ == frames_committed_;
}

void TempCacheStore::commit_host(const std::vector<int64_t>& frames) {
  if (!commit_keeps_layout() || static_cast<int>(frames.size()) != frames_ ||
      frames.front() != frames_committed_) {
    throw Error("tempcache store",
                "commit_host for a commit that changes the layout (internal "
                "error)");
  }
  frames_committed_ += frames_;
  device_frame_ = frames_committed_;
}

void TempCacheStore::commit_device(const at::Tensor& k, const at::Tensor& v) {
  if (k.size(1) != groups_ || k.size(2) != int64_t{frames_} * row_tokens_) {
    throw Error("tempcache store", "commit: k/v do not hold one block");
  }
  const int64_t rows = int64_t{batch_} * groups_;
  for (int64_t i = 0; i < frames_; ++i) {
    commit_frame(k.narrow(2, i * row_tokens_, row_tokens_).reshape({rows, row_tokens_, head_dim_}),
                 v.narrow(2, i * row_tokens_, row_tokens_).reshape({rows, row_tokens_, head_dim_}),
                 /*sink=*/false);
  }
  enforce_limits_device();
  refresh_bias();
}

void TempCacheStore::add_to(ReplayKey& key) const {
  for (const at::Tensor* t :
       {&keys_, &values_, &bias_, &projections_, &frame_, &table_.counts, &table_.last_frame,
        &table_.seq, &table_.sink, &table_.valid, &table_.codes, &table_.inv_norm,
        &table_.colocated, &table_.merges, &table_.evictions}) {
    key.add(*t);
  }
  uint64_t tau_bits = 0;
  static_assert(sizeof(tau_bits) == sizeof(settings_.tau));
  std::memcpy(&tau_bits, &settings_.tau, sizeof(tau_bits));
  key.add(tau_bits)
      .add(static_cast<uint64_t>(settings_.lsh_bits))
      .add(static_cast<uint64_t>(settings_.lsh_candidates))
      .add(static_cast<uint64_t>(settings_.window))
      .add(static_cast<uint64_t>(settings_.budget_rule))
      .add(static_cast<uint64_t>(settings_.bias_path))
      .add(static_cast<uint64_t>(budget_))
      .add(static_cast<uint64_t>(limit_))
      .add(static_cast<uint64_t>(span_))
      .add(static_cast<uint64_t>(table_.capacity));
}

void TempCacheStore::commit_frame(const at::Tensor& k, const at::Tensor& v, bool sink) {
  const at::Tensor codes = lsh_codes(k, projections_);
  MatchInputs in;
  in.entry_keys = table_.keys;
  in.entry_codes = table_.codes;
  in.entry_valid = table_.valid;
  in.entry_seq = table_.seq;
  in.entry_inv_norm = table_.inv_norm;
  in.capacity = table_.capacity;
  in.colocated = table_.colocated;
  in.new_keys = k;
  in.new_codes = codes;
  in.tau = settings_.tau;
  in.bits = settings_.lsh_bits;
  in.candidates = settings_.lsh_candidates;
  const at::Tensor target = match_keys(in);
  apply_frame(table_, k, v, codes, target, frame_, sink);
  frame_.add_(1);
}

void TempCacheStore::enforce_limits() {
  if (limit_ == 0) return;
  enforce_limits_device();
  span_ = std::min(span_, limit_);
}

void TempCacheStore::enforce_limits_device() {
  if (settings_.window > 0) {
    // The device counter is the number of frames committed; entries older than the window's first
    // frame go (none while the rollout is shorter than the window).
    drop_entries(table_, older_than(table_, frame_ - (settings_.window - frames_)));
  }
  if (budget_ > 0) {
    if (settings_.budget_rule == BudgetRule::kEvictOldest) {
      drop_entries(table_, oldest_beyond_budget(table_, budget_));
    } else {
      merge_closest_beyond_budget(table_, budget_);
    }
  }
  move_tail_entries(table_, limit_);
}

void TempCacheStore::refresh_bias() {
  const int64_t rows = int64_t{batch_} * groups_;
  const int64_t current = int64_t{frames_} * row_tokens_;
  const int64_t span = std::min(span_ + current, table_.capacity + 1);
  const int64_t history = std::min(span_, span);
  const at::Tensor counts = table_.counts.narrow(1, 0, history);
  const at::Tensor bias =
      at::cat({at::where(table_.valid.narrow(1, 0, history), counts.clamp_min(1.0f).log(),
                         at::full({}, kPadBias, counts.options())),
               at::zeros({rows, span - history}, counts.options())},
              1);
  at::Tensor keys = table_.keys.narrow(1, 0, span);
  write_bias_dims(keys, bias, head_dim_);
  if (bias_.defined()) bias_.view({rows, -1}).narrow(1, 0, span).copy_(bias);
}

TempCacheStore::History TempCacheStore::history() const {
  const int64_t span = std::min(span_, table_.capacity);
  const at::Tensor valid = table_.valid.narrow(1, 0, span);
  const at::Tensor bias = at::where(valid, table_.counts.narrow(1, 0, span).clamp_min(1.0f).log(),
                                    at::full({}, kPadBias, table_.counts.options()));
  return {keys_.narrow(2, 0, span).narrow(3, 0, head_dim_),
          values_.narrow(2, 0, span).narrow(3, 0, head_dim_), bias.view({batch_, groups_, span}),
          valid.view({batch_, groups_, span})};
}

void TempCacheStore::reconfigure(const TempCacheSettings& settings, int64_t budget) {
  const bool bits_changed = settings.lsh_bits != settings_.lsh_bits;
  const bool path_changed = settings.bias_path != settings_.bias_path;
  settings_ = settings;
  budget_ = budget;
  limit_ = limit_for(settings, budget);
  const int64_t rows = int64_t{batch_} * groups_;
  if (bits_changed) {
    projections_ = lsh_projections(rows, head_dim_, settings.lsh_bits, seed_, options_.device());
    table_.codes.narrow(1, 0, table_.capacity)
        .copy_(lsh_codes(table_.keys.narrow(1, 0, table_.capacity).narrow(2, 0, head_dim_),
                         projections_));
  }
  const int64_t block = int64_t{frames_} * row_tokens_;
  if (limit_ > 0) {
    enforce_limits();
    if (limit_ + block != table_.capacity || path_changed) resize(limit_ + block);
  } else if (span_ + block > table_.capacity || path_changed) {
    resize(std::max(table_.capacity, span_ + block));
  }
  refresh_bias();
}

}  // namespace wc::attention
