// See sink_dummy_store.h.
#include "engine/attention/stores/sink_dummy_store.h"

#include <numeric>

#include "engine/attention/sdpa.h"
#include "engine/core/error.h"

namespace wc::attention {

SinkDummyStore::SinkDummyStore(const StoreShape& shape, std::vector<int> sink_heads,
                               std::vector<int> dummy_heads, const at::Tensor& k_blocks,
                               const at::Tensor& v_blocks, std::vector<int64_t> held_blocks)
    : shape_(shape),
      sink_count_(static_cast<int>(sink_heads.size())),
      held_blocks_(std::move(held_blocks)) {
  dummy_selection_ = HeadSelection(dummy_heads, shape.options.device());
  sink_heads.insert(sink_heads.end(), dummy_heads.begin(), dummy_heads.end());
  selection_ = HeadSelection(std::move(sink_heads), shape.options.device());
  holds_block_ = k_blocks.defined();
  if (held_blocks_.size() != static_cast<size_t>(selection_.size())) {
    throw Error("sink/dummy store", "one held block per head expected (internal error)");
  }
  const int64_t tokens = shape.geometry.tokens_per_block();
  k_ = at::zeros({shape.batch, selection_.size(), 2 * tokens, shape.head_dim}, shape.options);
  v_ = at::zeros_like(k_);
  if (holds_block_) {
    k_.narrow(2, 0, tokens).copy_(k_blocks.reshape({shape.batch, selection_.size(), tokens, -1}));
    v_.narrow(2, 0, tokens).copy_(v_blocks.reshape({shape.batch, selection_.size(), tokens, -1}));
  }
}

void SinkDummyStore::set_grouped_position(int first) {
  std::vector<int> all(static_cast<size_t>(selection_.size()));
  std::iota(all.begin(), all.end(), first);
  const auto device = shape_.options.device();
  grouped_dummies_ = HeadSelection(std::vector<int>(all.begin() + sink_count_, all.end()), device);
  grouped_ = HeadSelection(std::move(all), device);
}

void SinkDummyStore::attend(const at::Tensor& q, const at::Tensor& k, const at::Tensor& v,
                            at::Tensor& out, PathTimer* timer, bool grouped) {
  const HeadSelection& heads = grouped ? grouped_ : selection_;
  const int64_t tokens = shape_.geometry.tokens_per_block();
  const int64_t offset = holds_block_ ? tokens : 0;
  at::Tensor q_heads;
  {
    PathScope scope(timer, "gather");
    q_heads = heads.gather(q);
    k_.narrow(2, offset, tokens).copy_(heads.gather(k));
    v_.narrow(2, offset, tokens).copy_(heads.gather(v));
  }
  at::Tensor o;
  {
    PathScope scope(timer, "sink_dummy");
    o = attention(q_heads, k_.narrow(2, 0, offset + tokens), v_.narrow(2, 0, offset + tokens));
  }
  PathScope scope(timer, "scatter");
  heads.scatter(out, o);
}

void SinkDummyStore::commit(const at::Tensor& k, const at::Tensor& v, int64_t block, bool grouped) {
  const int64_t tokens = shape_.geometry.tokens_per_block();
  if (!holds_block_) {
    const HeadSelection& heads = grouped ? grouped_ : selection_;
    k_.narrow(2, 0, tokens).copy_(heads.gather(k));
    v_.narrow(2, 0, tokens).copy_(heads.gather(v));
    for (auto& held : held_blocks_) held = block;
    holds_block_ = true;
    return;
  }
  commit_host(block);
  commit_device(k, v, grouped);
}

void SinkDummyStore::commit_host(int64_t block) {
  if (!holds_block_) throw Error("sink/dummy store", "commit_host before the first block");
  for (size_t i = static_cast<size_t>(sink_count_); i < held_blocks_.size(); ++i) {
    held_blocks_[i] = block;
  }
}

void SinkDummyStore::commit_device(const at::Tensor& k, const at::Tensor& v, bool grouped) {
  if (dummy_selection_.empty()) return;
  const HeadSelection& dummies_of = grouped ? grouped_dummies_ : dummy_selection_;
  const int64_t tokens = shape_.geometry.tokens_per_block();
  const int dummies = dummy_selection_.size();
  k_.narrow(1, sink_count_, dummies).narrow(2, 0, tokens).copy_(dummies_of.gather(k));
  v_.narrow(1, sink_count_, dummies).narrow(2, 0, tokens).copy_(dummies_of.gather(v));
}

FrameBatch SinkDummyStore::block(int position) const {
  FrameBatch batch;
  if (!holds_block_) return batch;
  const auto& g = shape_.geometry;
  const std::vector<int64_t> sizes = {shape_.batch, 1,        g.frames,
                                      g.grid_h,     g.grid_w, shape_.head_dim};
  batch.k = k_.narrow(1, position, 1).narrow(2, 0, g.tokens_per_block()).reshape(sizes).clone();
  batch.v = v_.narrow(1, position, 1).narrow(2, 0, g.tokens_per_block()).reshape(sizes).clone();
  batch.frames = g.frames_of_block(held_blocks_[position]);
  return batch;
}

}  // namespace wc::attention
