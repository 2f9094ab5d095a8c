// TempCache's table updates, vectorised over rows: merging / appending one frame's keys, evicting
// entries (window, evict_oldest) and collapsing the most similar adjacent entries (merge_closest).
// See Note [TempCache matching] and Note [TempCache budget].
#pragma once

#include <ATen/ATen.h>

#include <cstdint>

namespace wc::attention {

// One store's entries as rows (batch x head [x cell]). Slots [0, size_r) of row r hold its
// entries in insertion order; slot `capacity` is scratch ("trash") for scatters that must go
// somewhere. keys/values are views of the store's padded buffers (see Note [TempCache bias]).
struct EntryTable {
  at::Tensor keys;        // [R, >= capacity + 1, Dp] store dtype
  at::Tensor values;      // [R, >= capacity + 1, Dp]
  at::Tensor counts;      // [R, capacity + 1] float32 group sizes n (0 in free slots)
  at::Tensor last_frame;  // [R, capacity + 1] int64 frame of the representative key
  at::Tensor sink;        // [R, capacity + 1] bool: appended during the sink (first) block
  at::Tensor codes;       // [R, capacity + 1] int64 LSH bucket of the representative key
  at::Tensor sizes;       // [R] int64
  at::Tensor colocated;   // [R, N] int64 entry of the last frame's token at each position
  int64_t capacity = 0;
  int64_t head_dim = 0;
};

// Merges each key whose `target` is an entry (one key per entry, the newest wins; the others are
// appended) with n += 1, v̄ += (v − v̄)/n, representative = the new key; appends the rest. k, v:
// [R, N, D]; codes: [R, N]. Needs capacity >= max(sizes) + N. Returns the number of merges.
int64_t apply_frame(EntryTable& table, const at::Tensor& k, const at::Tensor& v,
                    const at::Tensor& codes, const at::Tensor& target, int64_t frame, bool sink);

// Drops the entries where `drop` ([R, capacity]) is true, keeping order. Returns how many.
int64_t drop_entries(EntryTable& table, const at::Tensor& drop);

// The oldest non-sink entries beyond `budget` per row, as a drop mask [R, capacity].
at::Tensor oldest_beyond_budget(const EntryTable& table, int64_t budget);

// Collapses the most similar adjacent non-sink pairs (cosine of representatives) until every row
// holds at most `budget` entries: runs of selected pairs become one entry with the summed count,
// the count-weighted mean value and the newest representative. Returns the number of entries
// removed.
int64_t merge_closest_beyond_budget(EntryTable& table, int64_t budget);

}  // namespace wc::attention
