// See dense_policy.h.
#include "engine/attention/dense_policy.h"

#include <algorithm>
#include <numeric>
#include <string>

#include "engine/attention/headcast/cast_settings.h"
#include "engine/core/error.h"

namespace wc::attention {
namespace {

StoreShape store_shape_of(const ModelShape& shape) {
  return StoreShape{shape.batch, shape.head_dim, shape.geometry,
                    at::TensorOptions().dtype(shape.dtype).device(shape.device)};
}

std::string sizes_string(const at::Tensor& t) {
  std::string s = "[";
  for (int64_t i = 0; i < t.dim(); ++i) s += (i ? ", " : "") + std::to_string(t.size(i));
  return s + "]";
}

}  // namespace

void check_attention_inputs(const char* policy, const ModelShape& shape, int layer,
                            const at::Tensor& q, const at::Tensor& k, const at::Tensor& v,
                            const StepInfo& step) {
  if (layer < 0 || layer >= shape.num_layers) {
    throw Error(policy, "layer " + std::to_string(layer) + " out of range [0, " +
                            std::to_string(shape.num_layers) + ")");
  }
  const auto& g = step.geometry;
  const auto& m = shape.geometry;
  if (g.frames != m.frames || g.grid_h != m.grid_h || g.grid_w != m.grid_w) {
    throw Error(policy, "step geometry differs from the model shape's block geometry");
  }
  const std::vector<int64_t> expected = {shape.batch, shape.num_heads, m.tokens_per_block(),
                                         shape.head_dim};
  for (const at::Tensor* t : {&q, &k, &v}) {
    if (!on_device(*t, shape.device) || t->scalar_type() != shape.dtype) {
      throw Error(policy, "q/k/v must be " + std::string(c10::toString(shape.dtype)) + " on " +
                              shape.device.str() + ", got " + c10::toString(t->scalar_type()) +
                              " on " + t->device().str());
    }
    if (t->sizes().vec() != expected) {
      throw Error(policy, "q/k/v must be [B, H, T, D] = [" + std::to_string(expected[0]) + ", " +
                              std::to_string(expected[1]) + ", " + std::to_string(expected[2]) +
                              ", " + std::to_string(expected[3]) + "], got " + sizes_string(*t));
    }
  }
}

DensePolicy::DensePolicy(const ModelShape& shape, const nlohmann::json& settings)
    : shape_(shape),
      store_shape_(store_shape_of(shape)),
      window_(default_cast_settings(shape).window) {
  configure(settings);
  reset();
}

void DensePolicy::reset() {
  layers_.clear();
  blocks_committed_ = 0;
  std::vector<int> heads(static_cast<size_t>(shape_.num_heads));
  std::iota(heads.begin(), heads.end(), 0);
  const FrameWindow window{shape_.geometry.frames, window_};
  for (int layer = 0; layer < shape_.num_layers; ++layer) {
    layers_.emplace_back(store_shape_, CellGrid::whole(shape_.geometry), heads, window,
                         FrameBatch{});
  }
}

at::Tensor DensePolicy::attend(int layer, const at::Tensor& q, const at::Tensor& k,
                               const at::Tensor& v, const StepInfo& step) {
  check_attention_inputs("dense", shape_, layer, q, k, v, step);
  return layers_[static_cast<size_t>(layer)].attend(q, k, v, nullptr, timer_, "dense");
}

void DensePolicy::commit(int layer, const at::Tensor& k, const at::Tensor& v,
                         const StepInfo& step) {
  check_attention_inputs("dense", shape_, layer, k, k, v, step);
  if (step.commit_device_only) {
    layers_[static_cast<size_t>(layer)].commit_device(k, v);
    return;
  }
  layers_[static_cast<size_t>(layer)].commit(k, v, step.block_index * shape_.geometry.frames);
  blocks_committed_ = std::max(blocks_committed_, step.block_index + 1);
}

std::optional<uint64_t> DensePolicy::attend_replay_key() const {
  if (timer_ != nullptr) return std::nullopt;  // timed paths need their host-side timer calls
  ReplayKey key;
  for (const WindowStore& store : layers_) store.add_to(key);
  return key.value();
}

std::optional<uint64_t> DensePolicy::block_replay_key(const StepInfo& clean) const {
  for (const WindowStore& store : layers_) {
    if (!store.commit_keeps_layout(clean.block_index * shape_.geometry.frames)) return std::nullopt;
  }
  return attend_replay_key();
}

void DensePolicy::commit_host(const StepInfo& clean) {
  if (!block_replay_key(clean)) {
    throw Error("dense", "commit_host for a commit that changes the stores (internal error)");
  }
  for (WindowStore& store : layers_) store.commit_host(clean.block_index * shape_.geometry.frames);
  blocks_committed_ = std::max(blocks_committed_, clean.block_index + 1);
}

PolicyStats DensePolicy::stats() const {
  PolicyStats stats;
  stats.policy = "dense";
  stats.blocks_committed = blocks_committed_;
  const int64_t elem = static_cast<int64_t>(at::elementSize(shape_.dtype));
  TypeStats& dense = stats.per_type[static_cast<size_t>(HeadType::kDense)];
  for (const WindowStore& store : layers_) {
    stats.heads.emplace_back(static_cast<size_t>(shape_.num_heads), HeadStats{});
    const int64_t tokens = store.held_frames() * shape_.geometry.tokens_per_frame();
    dense.heads += shape_.num_heads;
    dense.cached_tokens += tokens * shape_.num_heads;
    dense.cached_bytes += tokens * shape_.num_heads * 2 * shape_.batch * shape_.head_dim * elem;
  }
  return stats;
}

void DensePolicy::configure(const nlohmann::json& settings) {
  if (!settings.is_object()) throw Error("dense settings", "settings must be a JSON object");
  int64_t window = window_;
  for (const auto& [key, value] : settings.items()) {
    if (key != "window")
      throw Error("dense settings", "key '" + key + "': unknown key (known: window)");
    window = parse_window_setting(value, shape_.geometry, shape_.geometry.frames, "dense settings");
  }
  if (window == window_) return;
  window_ = window;
  // Re-file what each layer holds under the new window (dropping frames it no longer keeps).
  const FrameWindow frame_window{shape_.geometry.frames, window_};
  const int64_t committed = blocks_committed_ * shape_.geometry.frames;
  std::vector<int> heads(static_cast<size_t>(shape_.num_heads));
  std::iota(heads.begin(), heads.end(), 0);
  for (WindowStore& store : layers_) {
    FrameBatch all = store.history(heads);
    std::vector<int64_t> keep, frames;
    for (size_t i = 0; i < all.frames.size(); ++i) {
      if (frame_window.keeps(all.frames[i], committed)) {
        keep.push_back(static_cast<int64_t>(i));
        frames.push_back(all.frames[i]);
      }
    }
    FrameBatch kept;
    if (!keep.empty()) {
      const at::Tensor index =
          at::tensor(keep, at::TensorOptions().dtype(at::kLong)).to(all.k.device());
      kept = FrameBatch{all.k.index_select(2, index), all.v.index_select(2, index), frames};
    }
    store = WindowStore(store_shape_, CellGrid::whole(shape_.geometry), heads, frame_window, kept);
  }
}

nlohmann::json DensePolicy::settings() const {
  return {{"window", window_}};
}

std::unique_ptr<AttentionPolicy> make_dense_policy(const ModelShape& shape,
                                                   const nlohmann::json& settings) {
  return std::make_unique<DensePolicy>(shape, settings);
}

}  // namespace wc::attention
