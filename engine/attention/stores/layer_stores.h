// One layer's heterogeneous KV stores, split by head: window stores for Dense / Global / Spatial
// heads (one per group of heads holding the same frames) and the shared Sink+Dummy store. It
// serves attend/commit and re-casts heads between blocks. See Note [Re-casting heads].
#pragma once

#include <ATen/ATen.h>

#include <vector>

#include "engine/attention/headcast/head_type.h"
#include "engine/attention/path_timer.h"
#include "engine/attention/policy_stats.h"
#include "engine/attention/stores/sink_dummy_store.h"
#include "engine/attention/stores/window_store.h"

namespace wc::attention {

// Note [Re-casting heads]
// A re-cast (classification, a threshold change, a forced cast, a window or cell change,
// re-classify) takes each head's history out of its store and files it under its new type:
//  - Sink keeps the first block if it holds all of it, else the oldest complete block it holds
//    (block 0 is gone for good once a head dropped it); Dummy keeps the latest complete block. So a
//    head moving to a cheaper type drops the rest of its history at once.
//  - Dense / Global / Spatial keep every frame they hold that the window keeps; a head coming
//    from Sink/Dummy therefore starts with one block and refills as blocks are committed.
// Heads whose valid history differs cannot share one unmasked attention call (the key length
// differs, and a key mask would cost a masked kernel on every step). So window stores are grouped
// by (type, set of frames held): one store and one call per group. Groups of one type whose frame
// sets become equal (a refilled head caught up) are merged right after the commit that made them
// equal, so the steady state is one call per type again. A head that lost the sink block (it was
// Dummy) never regains it and keeps its own group until the next re-classify or re-cast to a
// one-block type. Re-casts rebuild the layer's stores (allocations happen here, never on the
// per-step path).

// Where the layer's window stores live and how Spatial heads are cut into cells.
struct StoreLayout {
  FrameWindow window;
  CellGrid spatial_cells;
  CellGrid whole_frame;
};

// A head's history as canonical frames, ascending ([B, 1, frames, h, w, D]; undefined if none).
using HeadHistory = FrameBatch;

class LayerStores {
 public:
  LayerStores() = default;
  // All heads Dense with no history.
  LayerStores(const StoreShape& shape, int num_heads, const StoreLayout& layout);

  const std::vector<HeadType>& types() const { return types_; }
  const std::vector<WindowStore>& windows() const { return windows_; }
  const std::vector<HeadType>& window_types() const { return window_types_; }
  const SinkDummyStore& sink_dummy() const { return sink_dummy_; }

  // Moves every head to `types[h]` under `layout`, after `frames_committed` frames.
  void recast(const std::vector<HeadType>& types, const StoreLayout& layout,
              int64_t frames_committed);

  // The layer's heads with each store's heads contiguous: the window stores' heads in store
  // order, then the Sink heads, then the Dummy heads (Note [Head order]). Changes only when the
  // stores are rebuilt (a re-cast, or groups merging after a commit).
  const std::vector<int>& head_order() const { return order_; }

  // The layer's attention output [B, H, T, D]. With `grouped`, q, k, v and the output hold the
  // heads in head_order() (Note [Head order]); so do k, v of the commits below. `global`, if
  // given, replaces the Global heads' dense calls.
  at::Tensor attend(const at::Tensor& q, const at::Tensor& k, const at::Tensor& v, PathTimer* timer,
                    bool grouped = false, const HistoryAttention* global = nullptr);
  // Writes block `block` into every store, then merges groups that caught up.
  void commit(const at::Tensor& k, const at::Tensor& v, int64_t block, bool grouped = false);

  // The frames head `head` holds, ascending.
  std::vector<int64_t> held_frames(int head) const;
  // Adds this layer's heads, tokens and bytes to `stats.per_type`.
  // Note [Replayed commit]'s pieces for commit(k, v, block): whether it keeps every store's
  // layout (no growth, compaction or merge of groups), and its host and device halves.
  bool commit_keeps_layout(int64_t block) const;
  void commit_host(int64_t block);
  void commit_device(const at::Tensor& k, const at::Tensor& v, bool grouped = false);
  // What fixes attend()'s device work: every store, in attend()'s order. See Note [Replayed
  // attention].
  void add_to(ReplayKey& key) const;
  void add_type_stats(PolicyStats& stats) const;

 private:
  std::vector<HeadHistory> histories() const;
  void rebuild(const std::vector<HeadType>& types, const std::vector<HeadHistory>& histories);

  StoreShape shape_;
  StoreLayout layout_;
  int64_t frames_committed_ = 0;
  std::vector<HeadType> types_;
  std::vector<WindowStore> windows_;
  std::vector<HeadType> window_types_;
  SinkDummyStore sink_dummy_;
  std::vector<int> order_;
};

// The timer path name of a window-stored type ("dense", "global", "spatial").
const char* window_path_name(HeadType type);

}  // namespace wc::attention
