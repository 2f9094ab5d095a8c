// TempCache's table updates, vectorised over rows and free of host synchronisation: merging /
// appending one frame's keys, evicting entries (window, evict_oldest), collapsing the most similar
// insertion-order neighbours (merge_closest) and moving entries out of the tail slots.
// See Note [TempCache matching], Note [TempCache budget] and Note [TempCache slots].
#pragma once

#include <ATen/ATen.h>

#include <cstdint>

namespace wc::attention {

// Note [TempCache slots]
// A store's rows (batch x head [x cell]) hold entries in fixed slots with a validity mask, not in
// a packed prefix: every tensor keeps one shape from block to block, nothing is ever counted on the
// host, and no per-block step moves more than one block's worth of keys.
//  - An entry never moves while it lives (except below); its insertion order is `seq` (frame ·
//    row_tokens + token of the key that created it), which evict_oldest, merge_closest and the
//    bucket search use instead of the slot index.
//  - Appends take the lowest free slots, so every entry sits below the largest size the row ever
//    had; the store keeps a host-side bound of that (it grows by one frame per committed frame
//    and is cut back to the limit by enforcement), which is the attention span: no .item().
//  - After enforcement a row holds at most `limit` entries, but some may sit in the tail slots
//    [limit, capacity) that the block's appends used. move_tail_entries() moves those into the
//    holes below `limit` (at most one block's worth of gathers), so the span is `limit` exactly
//    and the attention cost is that of a dense window of the same size.
//  - Free slots keep stale keys and values; their logit bias is the pad value, so they get
//    exactly zero weight (see Note [TempCache bias]).
// Counters (merges, evictions) are device tensors read only by stats().
//  - Every table tensor is updated in place, and the frame being committed is a device scalar, so
//    the same kernels on the same buffers serve every block and a commit can be recorded once
//    into a CUDA graph and replayed (Note [Replayed commit]).
struct EntryTable {
  at::Tensor keys;        // [R, >= capacity, Dp] store dtype (views of the store's buffers)
  at::Tensor values;      // [R, >= capacity, Dp]
  at::Tensor counts;      // [R, capacity + 1] float32 group sizes n; slot `capacity` is scratch
  at::Tensor last_frame;  // [R, capacity + 1] int64 frame of the representative key
  at::Tensor seq;         // [R, capacity + 1] int64 insertion order
  at::Tensor sink;        // [R, capacity + 1] bool: appended during the sink (first) block
  at::Tensor valid;       // [R, capacity + 1] bool: the slot holds an entry (scratch: false)
  at::Tensor codes;       // [R, capacity + 1] int64 LSH bucket of the representative key
  at::Tensor inv_norm;    // [R, capacity + 1] float32 1 / |representative key|
  at::Tensor colocated;   // [R, N] int64 slot of the last frame's token at each position, or -1
  at::Tensor merges;      // [] int64, on the device
  at::Tensor evictions;   // [] int64, on the device
  int64_t capacity = 0;
  int64_t head_dim = 0;
};

// 1 / |x| over the last dim in float32 (0-safe).
at::Tensor inverse_norm(const at::Tensor& x);

// Merges each key whose `target` is an entry (one key per entry, the newest wins; the others are
// appended) with n += 1, v̄ += (v − v̄)/n, representative = the new key; appends the rest to the
// lowest free slots. k, v: [R, N, D]; codes: [R, N]; `frame`: the frame's index, an int64 scalar
// on the device (new entries get seq = frame · N + token). Needs N free slots per row.
void apply_frame(EntryTable& table, const at::Tensor& k, const at::Tensor& v,
                 const at::Tensor& codes, const at::Tensor& target, const at::Tensor& frame,
                 bool sink);

// Frees the entries where `drop` ([R, capacity]) is true and counts them as evictions.
void drop_entries(EntryTable& table, const at::Tensor& drop);

// Entries whose representative is older than `oldest_frame` (an int64 scalar on the device), sink
// entries excepted.
at::Tensor older_than(const EntryTable& table, const at::Tensor& oldest_frame);

// The oldest (by seq) non-sink entries beyond `budget` per row, as a drop mask [R, capacity].
at::Tensor oldest_beyond_budget(const EntryTable& table, int64_t budget);

// Collapses the most similar insertion-order neighbours among non-sink entries (cosine of
// representatives) until every row holds at most `budget` entries: runs of selected pairs become
// one entry (the newest member's slot, key and frame) with the summed count and the count-weighted
// mean value. Counts the removed entries as merges.
void merge_closest_beyond_budget(EntryTable& table, int64_t budget);

// Moves the entries in slots [limit, capacity) into the lowest free slots below `limit` (each row
// must hold at most `limit` entries), remapping `colocated`.
void move_tail_entries(EntryTable& table, int64_t limit);

}  // namespace wc::attention
