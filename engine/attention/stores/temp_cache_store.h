// TempCache's compressed KV history for a set of rows (batch x heads, or batch x heads x cells for
// spatial heads): per row a list of entries (key κ, mean value v̄, count n) in one padded buffer
// so that attention over all rows is ONE call with a per-key log-count bias.
#pragma once

#include <ATen/ATen.h>

#include <cstdint>
#include <vector>

#include "engine/attention/replay_key.h"
#include "engine/attention/tempcache/temp_cache_merge.h"
#include "engine/attention/tempcache/tempcache_settings.h"

namespace wc::attention {

// Note [TempCache budget]
// Without limits, history grows by the keys that find no match: nothing for a static scene, a
// frame's worth per frame for fresh content. Two limits bound it, applied at the end of every
// commit (once per block; during a block the appends use the block's spare slots):
//  - "window" (frames): an entry whose representative key is older than the window (it has not
//    absorbed a key for that long) is dropped, sink entries excepted; with tau >= 1 this is exactly
//    the dense sliding window with sink, and a row never holds more than window · row_tokens.
//  - "budget" (entries per head): when a row holds more, either "evict_oldest" drops the oldest
//    non-sink entries by insertion order (the rule of a sliding window, applied to entries), or
//    "merge_closest" collapses the most similar insertion-order neighbours among non-sink entries,
//    count-weighted, so that no key's mass leaves the softmax (the lemma's approximation with the
//    smallest key deviation available among temporal neighbours).
// The sink block's entries (appended during block 0) are never evicted or collapsed, but they do
// absorb matching later keys. The budget must hold the sink block plus one frame. The smaller of
// the two limits is the row's `limit`: capacity is limit + one block, the attention span is the
// limit (Note [TempCache slots]), so per-block cost and memory are bounded by construction.
// Spatial rows (cells) share a head's budget in proportion to their tokens.

class TempCacheStore {
 public:
  TempCacheStore() = default;
  // `groups` rows per batch item, each row seeing `row_tokens` tokens per frame; `budget` is per
  // row (0 = none). `seed` seeds the row's projections.
  TempCacheStore(int batch, int groups, int row_tokens, int frames_per_block, int head_dim,
                 const at::TensorOptions& options, const TempCacheSettings& settings,
                 int64_t budget, uint64_t seed);

  // q: [B, G, Tq, D], k / v: the current block's [B, G, F·row_tokens, D] -> [B, G, Tq, D].
  at::Tensor attend(const at::Tensor& q, const at::Tensor& k, const at::Tensor& v);

  // Commits frames `frames` (ascending, one per row_tokens chunk of k / v: [B, G, nf·row_tokens,
  // D]). Reads nothing back from the device (Note [TempCache slots]).
  void commit(const at::Tensor& k, const at::Tensor& v, const std::vector<int64_t>& frames);

  // commit()'s halves (Note [Replayed commit]) once a commit keeps the layout: the budget or
  // window is reached, so every buffer, shape and span stays as it is and only the device
  // tensors change. commit_host advances the host's frame counters; commit_device launches the
  // kernels, reading the frame index from a device counter, and touches no host state.
  bool commit_keeps_layout() const;
  void commit_host(const std::vector<int64_t>& frames);
  void commit_device(const at::Tensor& k, const at::Tensor& v);
  // What fixes attend()'s and commit_device()'s device work. See Note [Replayed attention].
  void add_to(ReplayKey& key) const;

  // tau / budget / rule / window / lsh / bias-path changes, between blocks (the projections keep
  // their seed; a new lsh_bits recomputes the codes of every entry).
  void reconfigure(const TempCacheSettings& settings, int64_t budget);

  int groups() const { return groups_; }
  int batch() const { return batch_; }
  int64_t capacity() const { return table_.capacity; }
  int64_t span() const { return span_; }    // history slots attention reads
  int64_t limit() const { return limit_; }  // entries per row after a commit (0: unbounded)

  // The history attention reads, as views: keys and values [B, G, span, D] and the per-slot
  // logit bias [B, G, span] float32 (log n; kPadBias where a slot is empty), with `valid`
  // [B, G, span] marking the slots that hold an entry. Valid until the next commit.
  struct History {
    at::Tensor keys, values, bias, valid;
  };
  History history() const;

  // Inspection (temp_cache_store_inspect.cpp): these read device values and synchronise; they
  // serve stats and tests, never the per-block path.
  int64_t max_entries() const;
  int64_t merges() const;
  int64_t evictions() const;
  // Entries and summed counts per group (over the batch), for stats.
  std::vector<int64_t> entries_per_group() const;
  std::vector<double> count_sum_per_group() const;
  int64_t bytes_per_entry() const;  // padded K and V of one entry in one row

  // Row r = b·G + g: its entries in insertion order (CPU float32 keys/values [size, D], counts
  // [size], last frames, sink flags), for tests and tools.
  struct Entries {
    at::Tensor keys, values, counts, last_frame, sink;
  };
  Entries entries(int row) const;

 private:
  int64_t limit_for(const TempCacheSettings& settings, int64_t budget) const;
  void resize(int64_t capacity);
  // Matches and merges or appends one frame's keys at the device frame counter, then advances it.
  void commit_frame(const at::Tensor& k, const at::Tensor& v, bool sink);
  void commit_frames_device(const at::Tensor& k, const at::Tensor& v, int64_t count, bool sink);
  void enforce_limits();
  void enforce_limits_device();
  void refresh_bias();

  int batch_ = 0, groups_ = 0, row_tokens_ = 0, frames_ = 1, head_dim_ = 0;
  at::TensorOptions options_;
  TempCacheSettings settings_;
  int64_t budget_ = 0;
  uint64_t seed_ = 0;
  int64_t frames_committed_ = 0;
  // The index of the next frame to commit as the device holds it (so recorded commits need no
  // host value), and the host's copy of it; they differ only before a non-contiguous commit.
  at::Tensor frame_;
  int64_t device_frame_ = 0;
  int64_t limit_ = 0;
  int64_t span_ = 0;          // host bound on the slots in use (Note [TempCache slots])
  at::Tensor projections_;    // [R, D, bits]
  at::Tensor keys_, values_;  // [B, G, capacity + 1, Dp]
  at::Tensor bias_;           // [B, G, capacity + 1] float32, for the mask / reference paths
  EntryTable table_;
};

}  // namespace wc::attention
