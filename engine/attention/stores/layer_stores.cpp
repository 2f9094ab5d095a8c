// See layer_stores.h and Note [Re-casting heads].
#include "engine/attention/stores/layer_stores.h"

#include <algorithm>
#include <map>
#include <numeric>

#include "engine/attention/headcast/head_groups.h"
#include "engine/core/error.h"

namespace wc::attention {
namespace {

bool window_stored(HeadType type) {
  return type == HeadType::kDense || type == HeadType::kGlobal || type == HeadType::kSpatial;
}

at::Tensor long_tensor(const std::vector<int64_t>& values, const at::Device& device) {
  return at::tensor(values, at::TensorOptions().dtype(at::kLong)).to(device);
}

// The entries of `history` at `keep` (indices into its frames).
HeadHistory select_frames(const HeadHistory& history, const std::vector<int64_t>& keep) {
  HeadHistory out;
  if (keep.empty()) return out;
  const at::Tensor index = long_tensor(keep, history.k.device());
  out.k = history.k.index_select(2, index);
  out.v = history.v.index_select(2, index);
  for (int64_t i : keep) out.frames.push_back(history.frames[static_cast<size_t>(i)]);
  return out;
}

// The indices of the frames of block `block` in `history`, if it holds all of them.
std::vector<int64_t> block_entries(const HeadHistory& history, int64_t block, int frames) {
  std::vector<int64_t> entries;
  for (size_t i = 0; i < history.frames.size(); ++i) {
    if (history.frames[i] / frames == block) entries.push_back(static_cast<int64_t>(i));
  }
  if (static_cast<int>(entries.size()) != frames) entries.clear();
  return entries;
}

// What a head keeps when it becomes `type`; see Note [Re-casting heads].
HeadHistory history_for(const HeadHistory& history, HeadType type, const FrameWindow& window,
                        int64_t frames_committed) {
  const int frames = window.frames_per_block;
  if (history.frames.empty()) return history;
  if (window_stored(type)) {
    std::vector<int64_t> keep;
    for (size_t i = 0; i < history.frames.size(); ++i) {
      if (window.keeps(history.frames[i], frames_committed))
        keep.push_back(static_cast<int64_t>(i));
    }
    return keep.size() == history.frames.size() ? history : select_frames(history, keep);
  }
  std::vector<int64_t> blocks;
  for (int64_t f : history.frames) blocks.push_back(f / frames);
  blocks.erase(std::unique(blocks.begin(), blocks.end()), blocks.end());
  auto pick = [&](auto first, auto last) {
    for (auto it = first; it != last; ++it) {
      const auto entries = block_entries(history, *it, frames);
      if (!entries.empty()) return select_frames(history, entries);
    }
    return HeadHistory{};
  };
  if (type == HeadType::kSink) return pick(blocks.begin(), blocks.end());  // block 0 first
  return pick(blocks.rbegin(), blocks.rend());                             // latest block
}

FrameBatch concat_heads(const std::vector<const HeadHistory*>& parts) {
  FrameBatch batch;
  if (parts.empty() || parts.front()->frames.empty()) return batch;
  std::vector<at::Tensor> ks, vs;
  for (const HeadHistory* part : parts) {
    ks.push_back(part->k);
    vs.push_back(part->v);
  }
  batch.k = at::cat(ks, 1);
  batch.v = at::cat(vs, 1);
  batch.frames = parts.front()->frames;
  return batch;
}

}  // namespace

const char* window_path_name(HeadType type) {
  switch (type) {
    case HeadType::kGlobal:
      return "global";
    case HeadType::kSpatial:
      return "spatial";
    default:
      return "dense";
  }
}

LayerStores::LayerStores(const StoreShape& shape, int num_heads, const StoreLayout& layout)
    : shape_(shape), layout_(layout) {
  rebuild(std::vector<HeadType>(static_cast<size_t>(num_heads), HeadType::kDense),
          std::vector<HeadHistory>(static_cast<size_t>(num_heads)));
}

std::vector<HeadHistory> LayerStores::histories() const {
  std::vector<HeadHistory> out(types_.size());
  for (const WindowStore& store : windows_) {
    std::vector<int> positions(store.heads().size());
    std::iota(positions.begin(), positions.end(), 0);
    const FrameBatch all = store.history(positions);
    for (size_t p = 0; p < positions.size(); ++p) {
      HeadHistory& h = out[static_cast<size_t>(store.heads()[p])];
      h.frames = all.frames;
      if (!all.frames.empty()) {
        h.k = all.k.narrow(1, static_cast<int64_t>(p), 1);
        h.v = all.v.narrow(1, static_cast<int64_t>(p), 1);
      }
    }
  }
  const auto& sd_heads = sink_dummy_.selection().heads();
  for (size_t p = 0; p < sd_heads.size(); ++p) {
    out[static_cast<size_t>(sd_heads[p])] = sink_dummy_.block(static_cast<int>(p));
  }
  return out;
}

void LayerStores::rebuild(const std::vector<HeadType>& types,
                          const std::vector<HeadHistory>& histories) {
  types_ = types;
  windows_.clear();
  window_types_.clear();
  // Window-stored heads grouped by (type, frames held), heads ascending inside a group.
  std::map<std::pair<int, std::vector<int64_t>>, std::vector<int>> groups;
  std::vector<int> sink_heads, dummy_heads;
  for (size_t h = 0; h < types.size(); ++h) {
    const HeadType type = types[h];
    if (window_stored(type)) {
      groups[{static_cast<int>(type), histories[h].frames}].push_back(static_cast<int>(h));
    } else if (type == HeadType::kSink) {
      sink_heads.push_back(static_cast<int>(h));
    } else if (type == HeadType::kDummy) {
      dummy_heads.push_back(static_cast<int>(h));
    } else {
      throw Error("headcast", std::string("cannot store head type ") + head_type_name(type));
    }
  }
  for (const auto& [key, heads] : groups) {
    const auto type = static_cast<HeadType>(key.first);
    std::vector<const HeadHistory*> parts;
    for (int h : heads) parts.push_back(&histories[static_cast<size_t>(h)]);
    const CellGrid& cells =
        type == HeadType::kSpatial ? layout_.spatial_cells : layout_.whole_frame;
    windows_.emplace_back(shape_, cells, heads, layout_.window, concat_heads(parts));
    window_types_.push_back(type);
  }
  std::vector<const HeadHistory*> sd_parts;
  std::vector<int64_t> held_blocks;
  for (const auto* list : {&sink_heads, &dummy_heads}) {
    for (int h : *list) {
      const HeadHistory& history = histories[static_cast<size_t>(h)];
      sd_parts.push_back(&history);
      held_blocks.push_back(
          history.frames.empty() ? -1 : history.frames.front() / shape_.geometry.frames);
    }
  }
  const bool any_block =
      std::any_of(held_blocks.begin(), held_blocks.end(), [](int64_t b) { return b >= 0; });
  const bool all_blocks =
      std::all_of(held_blocks.begin(), held_blocks.end(), [](int64_t b) { return b >= 0; });
  if (any_block && !all_blocks) {
    throw Error("headcast", "sink/dummy heads must all hold a block or none (internal error)");
  }
  at::Tensor k_blocks, v_blocks;
  if (any_block) {
    std::vector<at::Tensor> ks, vs;
    for (const HeadHistory* part : sd_parts) {
      ks.push_back(part->k);
      vs.push_back(part->v);
    }
    k_blocks = at::cat(ks, 1);
    v_blocks = at::cat(vs, 1);
  }
  sink_dummy_ = SinkDummyStore(shape_, sink_heads, dummy_heads, k_blocks, v_blocks, held_blocks);
  // Note [Head order]: each store's heads become one contiguous range.
  order_.clear();
  for (WindowStore& store : windows_) {
    store.set_grouped_position(static_cast<int>(order_.size()));
    order_.insert(order_.end(), store.heads().begin(), store.heads().end());
  }
  if (!sink_dummy_.empty()) {
    sink_dummy_.set_grouped_position(static_cast<int>(order_.size()));
    const std::vector<int>& heads = sink_dummy_.selection().heads();
    order_.insert(order_.end(), heads.begin(), heads.end());
  }
}

void LayerStores::recast(const std::vector<HeadType>& types, const StoreLayout& layout,
                         int64_t frames_committed) {
  const std::vector<HeadHistory> old = histories();
  layout_ = layout;
  frames_committed_ = frames_committed;
  std::vector<HeadHistory> kept;
  kept.reserve(old.size());
  for (size_t h = 0; h < old.size(); ++h) {
    kept.push_back(history_for(old[h], types[h], layout_.window, frames_committed));
  }
  rebuild(types, kept);
}

at::Tensor LayerStores::attend(const at::Tensor& q, const at::Tensor& k, const at::Tensor& v,
                               PathTimer* timer, bool grouped, const HistoryAttention* global) {
  const auto heads = static_cast<int64_t>(types_.size());
  const auto instead = [&](size_t i) {
    return window_types_[i] == HeadType::kGlobal ? global : nullptr;
  };
  if (windows_.size() == 1 && sink_dummy_.empty() && windows_[0].cells().is_whole() &&
      windows_[0].selection().contiguous()) {
    // Every head in one plain store, in order: its output is the layer's output.
    return windows_[0].attend(q, k, v, nullptr, timer, window_path_name(window_types_[0]), grouped,
                              instead(0));
  }
  at::Tensor out = empty_layer_output(q, heads);
  for (size_t i = 0; i < windows_.size(); ++i) {
    windows_[i].attend(q, k, v, &out, timer, window_path_name(window_types_[i]), grouped,
                       instead(i));
  }
  if (!sink_dummy_.empty()) sink_dummy_.attend(q, k, v, out, timer, grouped);
  return out;
}

void LayerStores::add_to(ReplayKey& key) const {
  key.add(windows_.size());
  for (const WindowStore& store : windows_) store.add_to(key);
  sink_dummy_.add_to(key);
}

bool LayerStores::commit_keeps_layout(int64_t block) const {
  const int64_t first_frame = block * shape_.geometry.frames;
  for (const WindowStore& store : windows_) {
    if (!store.commit_keeps_layout(first_frame)) return false;
  }
  if (!sink_dummy_.empty() && !sink_dummy_.holds_block()) return false;
  // commit() merges groups of one type that come to hold the same frames (a rebuild).
  for (size_t i = 0; i < windows_.size(); ++i) {
    for (size_t j = i + 1; j < windows_.size(); ++j) {
      if (window_types_[i] == window_types_[j] &&
          windows_[i].frames_after_commit(first_frame) ==
              windows_[j].frames_after_commit(first_frame)) {
        return false;
      }
    }
  }
  return true;
}

void LayerStores::commit_host(int64_t block) {
  const int64_t first_frame = block * shape_.geometry.frames;
  for (WindowStore& store : windows_) store.commit_host(first_frame);
  if (!sink_dummy_.empty()) sink_dummy_.commit_host(block);
  frames_committed_ = first_frame + shape_.geometry.frames;
}

void LayerStores::commit_device(const at::Tensor& k, const at::Tensor& v, bool grouped) {
  for (WindowStore& store : windows_) store.commit_device(k, v, grouped);
  if (!sink_dummy_.empty()) sink_dummy_.commit_device(k, v, grouped);
}

void LayerStores::commit(const at::Tensor& k, const at::Tensor& v, int64_t block, bool grouped) {
  const int64_t first_frame = block * shape_.geometry.frames;
  for (WindowStore& store : windows_) store.commit(k, v, first_frame, grouped);
  if (!sink_dummy_.empty()) sink_dummy_.commit(k, v, block, grouped);
  frames_committed_ = first_frame + shape_.geometry.frames;
  // Merge groups of one type that now hold the same frames.
  for (size_t i = 0; i < windows_.size(); ++i) {
    for (size_t j = i + 1; j < windows_.size(); ++j) {
      if (window_types_[i] == window_types_[j] &&
          windows_[i].sorted_frames() == windows_[j].sorted_frames()) {
        rebuild(types_, histories());
        return;
      }
    }
  }
}

std::vector<int64_t> LayerStores::held_frames(int head) const {
  for (const WindowStore& store : windows_) {
    const auto& heads = store.heads();
    if (std::find(heads.begin(), heads.end(), head) != heads.end()) return store.sorted_frames();
  }
  const auto& heads = sink_dummy_.selection().heads();
  const auto it = std::find(heads.begin(), heads.end(), head);
  if (it == heads.end()) return {};
  const int64_t block = sink_dummy_.held_blocks()[static_cast<size_t>(it - heads.begin())];
  if (block < 0) return {};
  return shape_.geometry.frames_of_block(block);
}

void LayerStores::add_type_stats(PolicyStats& stats) const {
  const int64_t frame_tokens = shape_.geometry.tokens_per_frame();
  const int64_t bytes_per_token = 2 * int64_t{shape_.batch} * shape_.head_dim *
                                  static_cast<int64_t>(shape_.options.dtype().itemsize());
  for (size_t h = 0; h < types_.size(); ++h) {
    TypeStats& t = stats.per_type[static_cast<size_t>(types_[h])];
    const int64_t tokens =
        static_cast<int64_t>(held_frames(static_cast<int>(h)).size()) * frame_tokens;
    t.heads += 1;
    t.cached_tokens += tokens;
    t.cached_bytes += tokens * bytes_per_token;
  }
}

}  // namespace wc::attention
