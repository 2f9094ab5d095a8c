// The sliding-window-with-sink KV store of a group of heads that hold the same frames: fixed
// capacity (window + one reserved block for the current block's K/V), frame slots used as a ring,
// laid out cell-major for the spatial path or plain (one whole-frame cell) for Dense/Global heads.
#pragma once

#include <ATen/ATen.h>

#include <cstdint>
#include <functional>
#include <vector>

#include "engine/attention/headcast/head_groups.h"
#include "engine/attention/headcast/spatial_cells.h"
#include "engine/attention/path_timer.h"
#include "engine/attention/replay_key.h"
#include "engine/attention/step_info.h"

namespace wc::attention {

// Note [Window slots]
// A store holds `capacity` frame slots plus F reserved ones. Valid frames always occupy slots
// [0, held); attend() writes the current block into slots [held, held + F) and attends over the
// narrowed view [0, held + F): attention is invariant to key order, so the ring never needs
// reordering and the hot path allocates nothing proportional to the window. commit() writes the
// block's frames into the slots of frames that left the window (the ring) or appends them while
// the window fills. An unbounded window (0) doubles its capacity when full.

// Which frames a window keeps: the sink block, never evicted, plus the most recent
// `window - frames_per_block` frames; everything when `window` is 0.
struct FrameWindow {
  int frames_per_block = 1;
  int64_t window = 0;

  bool keeps(int64_t frame, int64_t frames_committed) const {
    return window == 0 || frame < frames_per_block ||
           frame >= frames_committed - (window - frames_per_block);
  }
};

// Fixed facts shared by a layer's stores.
struct StoreShape {
  int batch = 1;
  int head_dim = 1;
  BlockGeometry geometry;
  at::TensorOptions options;
};

// Frames of some heads in the canonical layout, frames ascending.
struct FrameBatch {
  at::Tensor k, v;              // [B, heads, frames, h, w, D]; undefined when no frames
  std::vector<int64_t> frames;  // frame index of each entry of dim 2
};

// An attention in place of a whole-grid store's dense call (HeadCast's Global heads under AnnSA):
// q [B, heads, T, D] and keys / values [B, heads, K, D], of which the first `history` are the
// held frames and the rest the current block; `heads` are the store's layer head indices. It
// returns what dense attention over all K keys would approximate, [B, heads, T, D].
using HistoryAttention =
    std::function<at::Tensor(const at::Tensor& q, const at::Tensor& keys, const at::Tensor& values,
                             int64_t history, const std::vector<int>& heads)>;

class WindowStore {
 public:
  // Stores `heads` (layer head indices) holding `history` (all heads hold the same frames).
  WindowStore(const StoreShape& shape, CellGrid cells, std::vector<int> heads, FrameWindow window,
              const FrameBatch& history);

  const HeadSelection& selection() const { return selection_; }
  // The store's heads in q, k, v whose heads come in the layer's grouped order (Note [Head
  // order]): positions [first, first + heads) there, set by the layer's stores.
  const HeadSelection& selection(bool grouped) const { return grouped ? grouped_ : selection_; }
  void set_grouped_position(int first);
  const std::vector<int>& heads() const { return selection_.heads(); }
  const CellGrid& cells() const { return cells_; }
  int64_t held_frames() const { return static_cast<int64_t>(slot_frames_.size()); }
  const std::vector<int64_t>& slot_frames() const { return slot_frames_; }
  std::vector<int64_t> sorted_frames() const;
  int64_t capacity_frames() const { return capacity_; }

  // Writes the current block's K/V of this store's heads into the reserved slots and attends
  // q ([B, H, T, D], all heads of the layer) over history + current block. If `out` is given the
  // result is scattered into it at this store's heads; otherwise it is returned as
  // [B, heads, T, D] (whole-grid stores only). `path` names the attention for the timer.
  // `grouped`: q, k, v and out hold the layer's heads in grouped order (Note [Head order]).
  // `instead`, for a whole-grid store, replaces the dense call.
  at::Tensor attend(const at::Tensor& q, const at::Tensor& k, const at::Tensor& v, at::Tensor* out,
                    PathTimer* timer, const char* path, bool grouped = false,
                    const HistoryAttention* instead = nullptr);

  // History + current block as [B, heads, (held + F)·N, D] (whole-grid stores, after attend()),
  // slot by slot; `slot_frames()` names the history slots, the current block follows them.
  at::Tensor keys_with_current() const;
  at::Tensor values_with_current() const;
  // The history alone as [B, heads, held·N, D] (whole-grid stores), slot by slot.
  at::Tensor held_keys() const;
  at::Tensor held_values() const;

  // Writes the block that starts at frame `first_frame` and evicts frames the window no longer
  // keeps. k, v: [B, H, T, D] of the whole layer.
  void commit(const at::Tensor& k, const at::Tensor& v, int64_t first_frame, bool grouped = false);

  // Note [Replayed commit]'s pieces. Whether commit(first_frame) keeps the buffers and shapes: a
  // bounded window, full, from which exactly one block of frames leaves.
  bool commit_keeps_layout(int64_t first_frame) const;
  // The frames held after commit(first_frame), ascending (nothing changes).
  std::vector<int64_t> frames_after_commit(int64_t first_frame) const;
  // commit()'s halves where commit_keeps_layout: the host half files the frames into the slots
  // of those that leave and copies the slot indices to the device; the device half writes k, v
  // into those slots.
  void commit_host(int64_t first_frame);
  void commit_device(const at::Tensor& k, const at::Tensor& v, bool grouped = false);

  // The history of the heads at `positions` (indices into heads()), frames ascending.
  FrameBatch history(const std::vector<int>& positions) const;

  // What fixes attend()'s device work: buffers, held frames, heads, cells. See Note [Replayed
  // attention].
  void add_to(ReplayKey& key) const;

 private:
  // Copies the slots of the block being committed into slot_index_ without waiting for the device.
  void upload_slot_index(const std::vector<int64_t>& slots);
  at::Tensor slot_view(const at::Tensor& store, size_t group) const;
  // The slots, ascending, of the frames the window no longer keeps once the block starting at
  // `first_frame` is committed.
  std::vector<int64_t> leaving_slots(int64_t first_frame) const;
  void grow(int64_t capacity);

  StoreShape shape_;
  CellGrid cells_;
  HeadSelection selection_;
  HeadSelection grouped_;  // the same heads as positions in the grouped order
  FrameWindow window_;
  int64_t capacity_ = 0;
  std::vector<int64_t> slot_frames_;
  at::Tensor slot_index_;  // [F] int64 on the device: where commit_device writes the block
  std::vector<at::Tensor> k_,
      v_;  // per cell group: [B, heads·cells, (capacity + F)·cell_tokens, D]
};

}  // namespace wc::attention
