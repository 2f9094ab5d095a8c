// The one-block store shared by Sink and Dummy heads: Sink heads keep the first block (frozen),
// Dummy heads the latest block (overwritten at each commit); one attention call serves both.
#pragma once

#include <ATen/ATen.h>

#include <cstdint>
#include <vector>

#include "engine/attention/headcast/head_groups.h"
#include "engine/attention/path_timer.h"
#include "engine/attention/stores/window_store.h"

namespace wc::attention {

class SinkDummyStore {
 public:
  SinkDummyStore() = default;
  // `blocks` holds one block per head in the order sink_heads ++ dummy_heads (canonical layout,
  // [B, heads, F, h, w, D], frames = that block's frames per head), or is empty (frames.empty())
  // before the first commit. Every head holds a block or none does (the store is one call).
  SinkDummyStore(const StoreShape& shape, std::vector<int> sink_heads, std::vector<int> dummy_heads,
                 const at::Tensor& k_blocks, const at::Tensor& v_blocks,
                 std::vector<int64_t> held_blocks);

  bool empty() const { return selection_.empty(); }
  const HeadSelection& selection() const { return selection_; }  // sink heads, then dummy heads
  // Positions [first, first + heads) of the layer's grouped order (Note [Head order]).
  void set_grouped_position(int first);
  int sink_count() const { return sink_count_; }
  bool holds_block() const { return holds_block_; }
  const std::vector<int64_t>& held_blocks() const { return held_blocks_; }  // per position

  // The current block against each head's stored block; scattered into `out` ([B, H, T, D]).
  // `grouped`: q, k, v and out hold the layer's heads in grouped order (Note [Head order]).
  void attend(const at::Tensor& q, const at::Tensor& k, const at::Tensor& v, at::Tensor& out,
              PathTimer* timer, bool grouped = false);
  // Block `block` (k, v: [B, H, T, D] of the layer): fills every head on the first commit, then
  // overwrites the Dummy heads only.
  void commit(const at::Tensor& k, const at::Tensor& v, int64_t block, bool grouped = false);
  // commit()'s halves once the store holds a block (Note [Replayed commit]): the host half
  // records which block the Dummy heads hold, the device half copies them.
  void commit_host(int64_t block);
  void commit_device(const at::Tensor& k, const at::Tensor& v, bool grouped = false);

  // The block held by the head at `position`, canonical [B, 1, F, h, w, D] (undefined if none).
  FrameBatch block(int position) const;

  // What fixes attend()'s device work. See Note [Replayed attention].
  void add_to(ReplayKey& key) const {
    selection_.add_to(key);
    key.add(holds_block_ ? 1 : 0).add(k_).add(v_);
  }

 private:
  StoreShape shape_;
  HeadSelection selection_;
  HeadSelection dummy_selection_;
  HeadSelection grouped_, grouped_dummies_;  // the same heads as grouped-order positions
  int sink_count_ = 0;
  bool holds_block_ = false;
  std::vector<int64_t> held_blocks_;
  at::Tensor k_, v_;  // [B, heads, 2T, D]: the stored block, then the current block
};

}  // namespace wc::attention
