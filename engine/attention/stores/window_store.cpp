// See window_store.h and Note [Window slots].
#include "engine/attention/stores/window_store.h"

#include <algorithm>
#include <numeric>

#include "engine/attention/sdpa.h"
#include "engine/core/error.h"

namespace wc::attention {
namespace {

// Initial capacity of an unbounded store, in blocks; it doubles when full.
constexpr int64_t kUnboundedInitialBlocks = 8;

at::Tensor long_tensor(const std::vector<int64_t>& values, const at::Device& device) {
  return at::tensor(values, at::TensorOptions().dtype(at::kLong)).to(device);
}

}  // namespace

WindowStore::WindowStore(const StoreShape& shape, CellGrid cells, std::vector<int> heads,
                         FrameWindow window, const FrameBatch& history)
    : shape_(shape),
      cells_(std::move(cells)),
      selection_(std::move(heads), shape.options.device()),
      window_(window) {
  const int64_t held = static_cast<int64_t>(history.frames.size());
  const int64_t frames = shape_.geometry.frames;
  capacity_ = window_.window > 0 ? window_.window
                                 : std::max(kUnboundedInitialBlocks * frames,
                                            (held + frames - 1) / frames * frames);
  if (held > capacity_) throw Error("window store", "history exceeds the window");
  const int64_t heads_count = selection_.size();
  for (const CellGroup& g : cells_.groups()) {
    const int64_t slots_tokens = (capacity_ + frames) * g.cell_tokens();
    k_.push_back(at::zeros({shape_.batch, heads_count * g.cells(), slots_tokens, shape_.head_dim},
                           shape_.options));
    v_.push_back(at::zeros_like(k_.back()));
  }
  slot_frames_ = history.frames;
  slot_index_ = at::zeros({frames}, shape_.options.dtype(at::kLong));
  if (held == 0) return;
  for (size_t g = 0; g < k_.size(); ++g) {
    const CellGroup& group = cells_.groups()[g];
    slot_view(k_[g], g).narrow(4, 0, held).copy_(CellGrid::cell_view_of_frames(history.k, group));
    slot_view(v_[g], g).narrow(4, 0, held).copy_(CellGrid::cell_view_of_frames(history.v, group));
  }
}

at::Tensor WindowStore::slot_view(const at::Tensor& store, size_t group) const {
  const CellGroup& g = cells_.groups()[group];
  return store.view({shape_.batch, selection_.size(), g.cell_rows, g.cell_cols,
                     capacity_ + shape_.geometry.frames, g.cell_h, g.cell_w, shape_.head_dim});
}

std::vector<int64_t> WindowStore::sorted_frames() const {
  std::vector<int64_t> frames = slot_frames_;
  std::sort(frames.begin(), frames.end());
  return frames;
}

void WindowStore::set_grouped_position(int first) {
  std::vector<int> positions(static_cast<size_t>(selection_.size()));
  std::iota(positions.begin(), positions.end(), first);
  grouped_ = HeadSelection(std::move(positions), shape_.options.device());
}

at::Tensor WindowStore::attend(const at::Tensor& q, const at::Tensor& k, const at::Tensor& v,
                               at::Tensor* out, PathTimer* timer, const char* path, bool grouped,
                               const HistoryAttention* instead) {
  const HeadSelection& heads = selection(grouped);
  const int frames = shape_.geometry.frames;
  const int64_t held = held_frames();
  const int64_t heads_count = selection_.size();
  at::Tensor result;
  // The heads first (whole head rows: one fast copy each), then the cell re-layout.
  at::Tensor qh, kh, vh;
  {
    PathScope scope(timer, "gather");
    qh = heads.gather(q);
    kh = heads.gather(k);
    vh = heads.gather(v);
  }
  // Cells write their output head-major first when the target's cell view cannot take the head
  // scatter directly (see below).
  const bool whole = cells_.is_whole();
  at::Tensor o_heads;
  if (out != nullptr && !whole) o_heads = at::empty_like(qh);
  for (size_t g = 0; g < k_.size(); ++g) {
    const CellGroup& group = cells_.groups()[g];
    const int64_t rows = heads_count * group.cells();
    const int64_t cell_tokens = group.cell_tokens();
    at::Tensor q_cells;
    {
      PathScope scope(timer, "gather");
      q_cells = cells_.cell_view(qh, frames, group)
                    .reshape({shape_.batch, rows, frames * cell_tokens, shape_.head_dim});
      slot_view(k_[g], g).narrow(4, held, frames).copy_(cells_.cell_view(kh, frames, group));
      slot_view(v_[g], g).narrow(4, held, frames).copy_(cells_.cell_view(vh, frames, group));
    }
    at::Tensor o;
    {
      PathScope scope(timer, path);
      const int64_t keys = (held + frames) * cell_tokens;
      if (instead != nullptr && whole) {
        o = (*instead)(q_cells, k_[g].narrow(2, 0, keys), v_[g].narrow(2, 0, keys),
                       held * cell_tokens, selection_.heads());
      } else {
        o = attention(q_cells, k_[g].narrow(2, 0, keys), v_[g].narrow(2, 0, keys));
      }
    }
    if (out == nullptr) {
      if (!whole) throw Error("window store", "cell-major output needs a target");
      result = o;
      continue;
    }
    PathScope scope(timer, "scatter");
    const at::Tensor o_cells =
        o.reshape({shape_.batch, heads_count, group.cell_rows, group.cell_cols, frames,
                   group.cell_h, group.cell_w, shape_.head_dim});
    if (whole) {
      // One cell: its view of `out` is plain rows, so the head scatter writes it directly.
      at::Tensor target = cells_.cell_view(*out, frames, group);
      heads.scatter(target, o_cells);
    } else {
      cells_.cell_view(o_heads, frames, group).copy_(o_cells);
    }
  }
  if (o_heads.defined()) {
    PathScope scope(timer, "scatter");
    heads.scatter(*out, o_heads);
  }
  return result;
}

at::Tensor WindowStore::keys_with_current() const {
  return k_[0].narrow(2, 0,
                      (held_frames() + shape_.geometry.frames) * cells_.groups()[0].cell_tokens());
}

at::Tensor WindowStore::held_keys() const {
  return k_[0].narrow(2, 0, held_frames() * cells_.groups()[0].cell_tokens());
}

at::Tensor WindowStore::held_values() const {
  return v_[0].narrow(2, 0, held_frames() * cells_.groups()[0].cell_tokens());
}

at::Tensor WindowStore::values_with_current() const {
  return v_[0].narrow(2, 0,
                      (held_frames() + shape_.geometry.frames) * cells_.groups()[0].cell_tokens());
}

void WindowStore::grow(int64_t capacity) {
  const int64_t held = held_frames();
  std::vector<at::Tensor> old_k = std::move(k_), old_v = std::move(v_);
  k_.clear();
  v_.clear();
  capacity_ = capacity;
  for (size_t g = 0; g < old_k.size(); ++g) {
    const CellGroup& group = cells_.groups()[g];
    const int64_t slots_tokens = (capacity_ + shape_.geometry.frames) * group.cell_tokens();
    k_.push_back(at::zeros({old_k[g].size(0), old_k[g].size(1), slots_tokens, shape_.head_dim},
                           shape_.options));
    v_.push_back(at::zeros_like(k_.back()));
    const int64_t tokens = held * group.cell_tokens();
    // Slots are frame-major inside each cell row, so the valid prefix of a cell row is contiguous.
    k_[g].narrow(2, 0, tokens).copy_(old_k[g].narrow(2, 0, tokens));
    v_[g].narrow(2, 0, tokens).copy_(old_v[g].narrow(2, 0, tokens));
  }
}

std::vector<int64_t> WindowStore::leaving_slots(int64_t first_frame) const {
  const int64_t committed = first_frame + shape_.geometry.frames;
  std::vector<int64_t> slots;
  for (size_t s = 0; s < slot_frames_.size(); ++s) {
    if (!window_.keeps(slot_frames_[s], committed)) slots.push_back(static_cast<int64_t>(s));
  }
  return slots;
}

bool WindowStore::commit_keeps_layout(int64_t first_frame) const {
  return window_.window > 0 && held_frames() == capacity_ &&
         static_cast<int64_t>(leaving_slots(first_frame).size()) == shape_.geometry.frames;
}

std::vector<int64_t> WindowStore::frames_after_commit(int64_t first_frame) const {
  const int64_t frames = shape_.geometry.frames;
  std::vector<int64_t> after;
  for (int64_t frame : slot_frames_) {
    if (window_.keeps(frame, first_frame + frames)) after.push_back(frame);
  }
  for (int64_t i = 0; i < frames; ++i) after.push_back(first_frame + i);
  std::sort(after.begin(), after.end());
  return after;
}

void WindowStore::commit_host(int64_t first_frame) {
  if (!commit_keeps_layout(first_frame)) {
    throw Error("window store",
                "commit_host for a commit that changes the layout (internal error)");
  }
  // Exactly one block's frames leave: the block takes their slots, in slot order.
  const std::vector<int64_t> slots = leaving_slots(first_frame);
  for (size_t i = 0; i < slots.size(); ++i) {
    slot_frames_[static_cast<size_t>(slots[i])] = first_frame + static_cast<int64_t>(i);
  }
  upload_slot_index(slots);
}

void WindowStore::upload_slot_index(const std::vector<int64_t>& slots) {
  // From pinned memory the upload is queued, not waited for: a pageable one makes the host wait
  // for the device to drain, once per layer in every clean pass.
  at::Tensor host = at::tensor(slots, at::TensorOptions().dtype(at::kLong));
  if (slot_index_.is_cuda()) host = host.pin_memory();
  slot_index_.copy_(host, /*non_blocking=*/true);
}

void WindowStore::commit_device(const at::Tensor& k, const at::Tensor& v, bool grouped) {
  const int frames = shape_.geometry.frames;
  const HeadSelection& heads = selection(grouped);
  const at::Tensor kh = heads.gather(k), vh = heads.gather(v);
  for (size_t g = 0; g < k_.size(); ++g) {
    const CellGroup& group = cells_.groups()[g];
    slot_view(k_[g], g).index_copy_(4, slot_index_, cells_.cell_view(kh, frames, group));
    slot_view(v_[g], g).index_copy_(4, slot_index_, cells_.cell_view(vh, frames, group));
  }
}

void WindowStore::commit(const at::Tensor& k, const at::Tensor& v, int64_t first_frame,
                         bool grouped) {
  if (commit_keeps_layout(first_frame)) {
    commit_host(first_frame);
    commit_device(k, v, grouped);
    return;
  }
  const int frames = shape_.geometry.frames;
  const int64_t committed = first_frame + frames;
  const std::vector<int64_t> free_slots = leaving_slots(first_frame);
  std::vector<int64_t> slots;
  size_t next_free = 0;
  for (int i = 0; i < frames; ++i) {
    int64_t slot;
    if (next_free < free_slots.size()) {
      slot = free_slots[next_free++];
      slot_frames_[slot] = first_frame + i;
    } else {
      slot = static_cast<int64_t>(slot_frames_.size());
      slot_frames_.push_back(first_frame + i);
    }
    slots.push_back(slot);
  }
  if (held_frames() > capacity_) {
    if (window_.window > 0) throw Error("window store", "window overflow (internal error)");
    grow(capacity_ * 2);
  }
  upload_slot_index(slots);
  commit_device(k, v, grouped);
  if (next_free < free_slots.size()) {
    // More frames left the window than arrived (it shrank): rebuild compactly. Rare (settings).
    std::vector<int> all(selection_.size());
    std::iota(all.begin(), all.end(), 0);
    FrameBatch kept = history(all);
    std::vector<int64_t> keep_index;
    std::vector<int64_t> keep_frames;
    for (size_t i = 0; i < kept.frames.size(); ++i) {
      if (window_.keeps(kept.frames[i], committed)) {
        keep_index.push_back(static_cast<int64_t>(i));
        keep_frames.push_back(kept.frames[i]);
      }
    }
    const at::Tensor index = long_tensor(keep_index, shape_.options.device());
    FrameBatch compact{kept.k.index_select(2, index), kept.v.index_select(2, index), keep_frames};
    const HeadSelection grouped_heads = grouped_;
    *this = WindowStore(shape_, cells_, selection_.heads(), window_, compact);
    grouped_ = grouped_heads;
  }
}

void WindowStore::add_to(ReplayKey& key) const {
  selection_.add_to(key);
  key.add(static_cast<uint64_t>(held_frames())).add(static_cast<uint64_t>(capacity_));
  for (size_t g = 0; g < k_.size(); ++g) {
    const CellGroup& group = cells_.groups()[g];
    key.add({group.row0, group.cell_rows, group.cell_h, group.col0, group.cell_cols, group.cell_w});
    key.add(k_[g]).add(v_[g]);
  }
  key.add(slot_index_);
}

FrameBatch WindowStore::history(const std::vector<int>& positions) const {
  FrameBatch batch;
  const int64_t held = held_frames();
  if (held == 0 || positions.empty()) return batch;
  std::vector<int64_t> order(static_cast<size_t>(held));
  std::iota(order.begin(), order.end(), 0);
  std::sort(order.begin(), order.end(),
            [&](int64_t a, int64_t b) { return slot_frames_[a] < slot_frames_[b]; });
  for (int64_t slot : order) batch.frames.push_back(slot_frames_[slot]);
  const auto device = shape_.options.device();
  const at::Tensor order_index = long_tensor(order, device);
  const at::Tensor head_index =
      long_tensor(std::vector<int64_t>(positions.begin(), positions.end()), device);
  const auto& geometry = shape_.geometry;
  const std::vector<int64_t> sizes = {shape_.batch,
                                      static_cast<int64_t>(positions.size()),
                                      held,
                                      geometry.grid_h,
                                      geometry.grid_w,
                                      shape_.head_dim};
  batch.k = at::empty(sizes, shape_.options);
  batch.v = at::empty(sizes, shape_.options);
  for (size_t g = 0; g < k_.size(); ++g) {
    const CellGroup& group = cells_.groups()[g];
    CellGrid::cell_view_of_frames(batch.k, group)
        .copy_(slot_view(k_[g], g).index_select(1, head_index).index_select(4, order_index));
    CellGrid::cell_view_of_frames(batch.v, group)
        .copy_(slot_view(v_[g], g).index_select(1, head_index).index_select(4, order_index));
  }
  return batch;
}

}  // namespace wc::attention
