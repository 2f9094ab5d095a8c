// See combined_policy.h and Note [Combined take-over].
#include "engine/attention/tempcache/combined_policy.h"

#include <algorithm>

#include "engine/attention/dense_policy.h"
#include "engine/attention/tempcache/tempcache_policy.h"
#include "engine/core/error.h"

namespace wc::attention {
namespace {

constexpr const char* kWhere = "combined settings";

// The headcast keys of a combined settings object (everything but the tempcache keys).
nlohmann::json headcast_part(const nlohmann::json& json) {
  nlohmann::json part = nlohmann::json::object();
  for (const auto& [key, value] : json.items()) {
    if (!is_tempcache_key(key)) part[key] = value;
  }
  return part;
}

nlohmann::json tempcache_part(const nlohmann::json& json) {
  nlohmann::json part = nlohmann::json::object();
  for (const auto& [key, value] : json.items()) {
    if (is_tempcache_key(key)) part[key] = value;
  }
  return part;
}

// The heads of `types` equal to `type`, ascending.
std::vector<int> heads_of(const std::vector<HeadType>& types, HeadType type) {
  std::vector<int> heads;
  for (size_t h = 0; h < types.size(); ++h) {
    if (types[h] == type) heads.push_back(static_cast<int>(h));
  }
  return heads;
}

// The frames HeadCast holds for `heads` (all must hold the same frames) as one FrameBatch.
FrameBatch held_history(const LayerStores& stores, const std::vector<int>& heads) {
  std::vector<at::Tensor> ks, vs;
  FrameBatch batch;
  for (size_t i = 0; i < heads.size(); ++i) {
    for (const WindowStore& store : stores.windows()) {
      const auto& members = store.heads();
      const auto it = std::find(members.begin(), members.end(), heads[i]);
      if (it == members.end()) continue;
      const FrameBatch part = store.history({static_cast<int>(it - members.begin())});
      if (i > 0 && part.frames != batch.frames) {
        throw Error("combined", "heads of one type hold different frames at take-over");
      }
      batch.frames = part.frames;
      if (!part.frames.empty()) {
        ks.push_back(part.k);
        vs.push_back(part.v);
      }
    }
  }
  if (!ks.empty()) {
    batch.k = at::cat(ks, 1);
    batch.v = at::cat(vs, 1);
  }
  return batch;
}

// [B, Hx, frames·h·w, D] (or [B, Hx, frames, h, w, D]) -> one row per (head, cell) of `group`:
// [B, Hx·cells, frames·cell_tokens, D].
at::Tensor cell_rows(const at::Tensor& x, int frames, const CellGrid& grid, const CellGroup& group,
                     bool frame_slots) {
  const at::Tensor view =
      frame_slots ? CellGrid::cell_view_of_frames(x, group) : grid.cell_view(x, frames, group);
  return view.reshape(
      {x.size(0), x.size(1) * group.cells(), int64_t{frames} * group.cell_tokens(), x.size(-1)});
}

// This policy offers no head order, so its q, k, v are in the model's order whatever the flag
// says; the inner HeadCast policy must not read them as grouped (Note [Head order]).
StepInfo in_model_order(const StepInfo& step) {
  StepInfo plain = step;
  plain.heads_grouped = false;
  return plain;
}

}  // namespace

CombinedPolicy::CombinedPolicy(const ModelShape& shape, const nlohmann::json& settings)
    : shape_(shape),
      store_shape_{shape.batch, shape.head_dim, shape.geometry,
                   at::TensorOptions().dtype(shape.dtype).device(shape.device)},
      cast_settings_(default_cast_settings(shape)) {
  apply(settings);
  reset();
}

void CombinedPolicy::apply(const nlohmann::json& json) {
  if (!json.is_object()) throw Error(kWhere, "settings must be a JSON object");
  const CastSettings cast =
      apply_cast_settings(cast_settings_, headcast_part(json), shape_, kWhere);
  if (cast.global_ann) {
    throw Error(kWhere,
                "key 'global_ann': HeadCast's option; combined's Global heads attend over "
                "TempCache's merged history (TempCache + AnnSA is the fast-ar policy)");
  }
  TempCacheSettings temp = apply_tempcache_settings(temp_settings_, tempcache_part(json),
                                                    shape_.geometry, false, kWhere);
  temp.window = cast.window;
  cast_settings_ = cast;
  temp_settings_ = temp;
}

void CombinedPolicy::reset() {
  inner_ = std::make_unique<HeadCastPolicy>(shape_, cast_settings_json(cast_settings_));
  layers_.assign(static_cast<size_t>(shape_.num_layers), Layer{});
  blocks_committed_ = 0;
  for (int l = 0; l < shape_.num_layers; ++l) {
    const auto& types = inner_->cast(l);
    if (std::any_of(types.begin(), types.end(), [](HeadType t) { return t != HeadType::kDense; })) {
      take_over(l);
    }
  }
  release_inner_when_done();
}

int64_t CombinedPolicy::row_budget(int64_t row_tokens) const {
  if (temp_settings_.budget == 0) return 0;
  const int64_t frame_tokens = shape_.geometry.tokens_per_frame();
  return std::max(temp_settings_.budget * row_tokens / frame_tokens,
                  int64_t{shape_.geometry.frames + 1} * row_tokens);
}

void CombinedPolicy::take_over(int index) {
  Layer& layer = layers_[static_cast<size_t>(index)];
  const LayerStores& stores = inner_->layer_stores(index);
  layer.types = inner_->cast(index);
  layer.evidence.clear();
  for (int h = 0; h < shape_.num_heads; ++h) layer.evidence.push_back(inner_->evidence(index, h));
  layer.sink_dummy = stores.sink_dummy();
  const auto device = shape_.device;
  const int frames = shape_.geometry.frames;
  const int frame_tokens = shape_.geometry.tokens_per_frame();

  const std::vector<int> global = heads_of(layer.types, HeadType::kGlobal);
  layer.global_heads = HeadSelection(global, device);
  layer.global.clear();
  if (!global.empty()) {
    layer.global.emplace_back(shape_.batch, static_cast<int>(global.size()), frame_tokens, frames,
                              shape_.head_dim, store_shape_.options, temp_settings_,
                              row_budget(frame_tokens),
                              tempcache_store_seed(temp_settings_.seed, index, 0));
    const FrameBatch history = held_history(stores, global);
    if (!history.frames.empty()) {
      const std::vector<int64_t> sizes = {
          shape_.batch, static_cast<int64_t>(global.size()),
          static_cast<int64_t>(history.frames.size()) * frame_tokens, shape_.head_dim};
      layer.global[0].commit(history.k.reshape(sizes), history.v.reshape(sizes), history.frames);
    }
  }

  const std::vector<int> spatial = heads_of(layer.types, HeadType::kSpatial);
  layer.spatial_heads = HeadSelection(spatial, device);
  layer.spatial.clear();
  if (!spatial.empty()) {
    const CellGrid grid =
        CellGrid::make(shape_.geometry, cast_settings_.cell, cast_settings_.cell_mode);
    const FrameBatch history = held_history(stores, spatial);
    int store_index = 1;
    for (const CellGroup& group : grid.groups()) {
      SpatialStore entry{
          group, TempCacheStore(shape_.batch, static_cast<int>(spatial.size()) * group.cells(),
                                group.cell_tokens(), frames, shape_.head_dim, store_shape_.options,
                                temp_settings_, row_budget(group.cell_tokens()),
                                tempcache_store_seed(temp_settings_.seed, index, store_index++))};
      if (!history.frames.empty()) {
        const int held = static_cast<int>(history.frames.size());
        entry.store.commit(cell_rows(history.k, held, grid, group, true),
                           cell_rows(history.v, held, grid, group, true), history.frames);
      }
      layer.spatial.push_back(std::move(entry));
    }
  }
  layer.taken_over = true;
}

void CombinedPolicy::release_inner_when_done() {
  if (std::all_of(layers_.begin(), layers_.end(), [](const Layer& l) { return l.taken_over; })) {
    inner_.reset();
  }
}

at::Tensor CombinedPolicy::attend(int index, const at::Tensor& q, const at::Tensor& k,
                                  const at::Tensor& v, const StepInfo& step) {
  check_attention_inputs("combined", shape_, index, q, k, v, step);
  Layer& layer = layers_[static_cast<size_t>(index)];
  if (!layer.taken_over) return inner_->attend(index, q, k, v, in_model_order(step));
  at::Tensor out = empty_layer_output(q, shape_.num_heads);
  if (!layer.global.empty()) {
    const HeadSelection& sel = layer.global_heads;
    at::Tensor o;
    {
      PathScope scope(timer_, "global");
      o = layer.global[0].attend(sel.gather(q), sel.gather(k), sel.gather(v));
    }
    PathScope scope(timer_, "scatter");
    sel.scatter(out, o);
  }
  if (!layer.spatial.empty()) {
    const HeadSelection& sel = layer.spatial_heads;
    const CellGrid grid =
        CellGrid::make(shape_.geometry, cast_settings_.cell, cast_settings_.cell_mode);
    const at::Tensor qs = sel.gather(q), ks = sel.gather(k), vs = sel.gather(v);
    at::Tensor os = at::empty_like(qs);
    const int frames = shape_.geometry.frames;
    for (SpatialStore& entry : layer.spatial) {
      PathScope scope(timer_, "spatial");
      const CellGroup& g = entry.group;
      const at::Tensor o = entry.store.attend(cell_rows(qs, frames, grid, g, false),
                                              cell_rows(ks, frames, grid, g, false),
                                              cell_rows(vs, frames, grid, g, false));
      grid.cell_view(os, frames, g)
          .copy_(o.reshape({os.size(0), sel.size(), g.cell_rows, g.cell_cols, frames, g.cell_h,
                            g.cell_w, shape_.head_dim}));
    }
    PathScope scope(timer_, "scatter");
    sel.scatter(out, os);
  }
  if (!layer.sink_dummy.empty()) layer.sink_dummy.attend(q, k, v, out, timer_);
  return out;
}

void CombinedPolicy::commit(int index, const at::Tensor& k, const at::Tensor& v,
                            const StepInfo& step) {
  check_attention_inputs("combined", shape_, index, k, k, v, step);
  Layer& layer = layers_[static_cast<size_t>(index)];
  const bool device_only = step.commit_device_only;
  if (device_only && !layer.taken_over) {
    throw Error("combined", "device-only commit before take-over (internal error)");
  }
  if (!device_only && step.block_index != layer.blocks_committed) {
    throw Error("combined", "layer " + std::to_string(index) + ": commit of block " +
                                std::to_string(step.block_index) + ", expected block " +
                                std::to_string(layer.blocks_committed));
  }
  if (!device_only) {
    layer.blocks_committed = step.block_index + 1;
    blocks_committed_ = std::max(blocks_committed_, layer.blocks_committed);
  }
  if (!layer.taken_over) {
    inner_->commit(index, k, v, in_model_order(step));
    const auto& types = inner_->cast(index);
    if (std::any_of(types.begin(), types.end(), [](HeadType t) { return t != HeadType::kDense; })) {
      take_over(index);
      release_inner_when_done();
    }
    return;
  }
  const std::vector<int64_t> frame_indices = shape_.geometry.frames_of_block(step.block_index);
  if (!layer.global.empty()) {
    const HeadSelection& sel = layer.global_heads;
    TempCacheStore& store = layer.global[0];
    if (device_only) {
      store.commit_device(sel.gather(k), sel.gather(v));
    } else {
      store.commit(sel.gather(k), sel.gather(v), frame_indices);
    }
  }
  if (!layer.spatial.empty()) {
    const HeadSelection& sel = layer.spatial_heads;
    const CellGrid grid =
        CellGrid::make(shape_.geometry, cast_settings_.cell, cast_settings_.cell_mode);
    const at::Tensor ks = sel.gather(k), vs = sel.gather(v);
    const int frames = shape_.geometry.frames;
    for (SpatialStore& entry : layer.spatial) {
      const at::Tensor kc = cell_rows(ks, frames, grid, entry.group, false);
      const at::Tensor vc = cell_rows(vs, frames, grid, entry.group, false);
      if (device_only) {
        entry.store.commit_device(kc, vc);
      } else {
        entry.store.commit(kc, vc, frame_indices);
      }
    }
  }
  if (!layer.sink_dummy.empty()) {
    if (device_only) {
      layer.sink_dummy.commit_device(k, v);
    } else {
      layer.sink_dummy.commit(k, v, step.block_index);
    }
  }
}

std::optional<uint64_t> CombinedPolicy::attend_replay_key() const {
  if (timer_ != nullptr || inner_) return std::nullopt;  // timed, or a layer not yet taken over
  ReplayKey key;
  key.add(static_cast<uint64_t>(cast_settings_.cell))
      .add(static_cast<uint64_t>(cast_settings_.cell_mode));
  for (const Layer& layer : layers_) {
    layer.global_heads.add_to(key);
    layer.spatial_heads.add_to(key);
    for (const TempCacheStore& store : layer.global) store.add_to(key);
    for (const SpatialStore& entry : layer.spatial) entry.store.add_to(key);
    if (!layer.sink_dummy.empty()) layer.sink_dummy.add_to(key);
  }
  return key.value();
}

std::optional<uint64_t> CombinedPolicy::block_replay_key(const StepInfo& clean) const {
  if (inner_) return std::nullopt;
  for (const Layer& layer : layers_) {
    if (layer.blocks_committed != clean.block_index) return std::nullopt;
    for (const TempCacheStore& store : layer.global) {
      if (!store.commit_keeps_layout()) return std::nullopt;
    }
    for (const SpatialStore& entry : layer.spatial) {
      if (!entry.store.commit_keeps_layout()) return std::nullopt;
    }
    if (!layer.sink_dummy.empty() && !layer.sink_dummy.holds_block()) return std::nullopt;
  }
  return attend_replay_key();
}

void CombinedPolicy::commit_host(const StepInfo& clean) {
  if (!block_replay_key(clean)) {
    throw Error("combined", "commit_host for a commit that changes the stores (internal error)");
  }
  const std::vector<int64_t> frame_indices = shape_.geometry.frames_of_block(clean.block_index);
  for (Layer& layer : layers_) {
    for (TempCacheStore& store : layer.global) store.commit_host(frame_indices);
    for (SpatialStore& entry : layer.spatial) entry.store.commit_host(frame_indices);
    if (!layer.sink_dummy.empty()) layer.sink_dummy.commit_host(clean.block_index);
    layer.blocks_committed = clean.block_index + 1;
  }
  blocks_committed_ = std::max(blocks_committed_, clean.block_index + 1);
}

PolicyStats CombinedPolicy::stats() const {
  PolicyStats stats;
  stats.policy = name();
  stats.blocks_committed = blocks_committed_;
  stats.classified = true;
  const PolicyStats inner = inner_ ? inner_->stats() : PolicyStats{};
  const int64_t block_tokens = shape_.geometry.tokens_per_block();
  const int64_t bytes_per_token = 2 * int64_t{shape_.batch} * shape_.head_dim *
                                  static_cast<int64_t>(store_shape_.options.dtype().itemsize());
  for (size_t l = 0; l < layers_.size(); ++l) {
    const Layer& layer = layers_[l];
    if (!layer.taken_over) {
      stats.classified = false;
      stats.heads.push_back(inner.heads.at(l));
      inner_->layer_stores(static_cast<int>(l)).add_type_stats(stats);
      continue;
    }
    std::vector<HeadStats> heads;
    for (size_t h = 0; h < layer.types.size(); ++h) {
      heads.push_back(
          HeadStats{layer.types[h], head_scores(layer.evidence[h], cast_settings_.thresholds)});
    }
    stats.heads.push_back(std::move(heads));
    for (const TempCacheStore& store : layer.global) {
      add_tempcache_stats(store, HeadType::kGlobal, 1, true, stats);
    }
    bool first = true;
    for (const SpatialStore& entry : layer.spatial) {
      add_tempcache_stats(entry.store, HeadType::kSpatial, entry.group.cells(), first, stats);
      first = false;
    }
    const int sinks = layer.sink_dummy.sink_count();
    const int all = layer.sink_dummy.selection().size();
    const int64_t held = layer.sink_dummy.holds_block() ? block_tokens : 0;
    for (const auto& [type, count] :
         {std::pair{HeadType::kSink, sinks}, std::pair{HeadType::kDummy, all - sinks}}) {
      TypeStats& t = stats.per_type[static_cast<size_t>(type)];
      t.heads += count;
      t.cached_tokens += count * held;
      t.cached_bytes += count * held * bytes_per_token;
    }
  }
  return stats;
}

void CombinedPolicy::configure(const nlohmann::json& json) {
  const nlohmann::json cast_keys = headcast_part(json);
  if (!cast_keys.empty() && blocks_committed_ > 0) {
    throw Error(kWhere, "key '" + cast_keys.begin().key() +
                            "': headcast keys can change only before the first block (reset "
                            "first); see Note [Combined take-over]");
  }
  apply(json);
  if (!cast_keys.empty()) {
    reset();
    return;
  }
  for (size_t l = 0; l < layers_.size(); ++l) {
    Layer& layer = layers_[l];
    for (TempCacheStore& store : layer.global) {
      store.reconfigure(temp_settings_, row_budget(shape_.geometry.tokens_per_frame()));
    }
    for (SpatialStore& entry : layer.spatial) {
      entry.store.reconfigure(temp_settings_, row_budget(entry.group.cell_tokens()));
    }
  }
}

nlohmann::json CombinedPolicy::settings() const {
  nlohmann::json json = cast_settings_json(cast_settings_);
  const nlohmann::json temp = tempcache_settings_json(temp_settings_, false);
  for (const auto& [key, value] : temp.items()) {
    json[key] = value;
  }
  return json;
}

void CombinedPolicy::reclassify() {
  cast_settings_.cast = nullptr;
  reset();
}

const std::vector<HeadType>& CombinedPolicy::cast(int layer) const {
  const Layer& l = layers_.at(static_cast<size_t>(layer));
  return l.taken_over ? l.types : inner_->cast(layer);
}

std::unique_ptr<AttentionPolicy> make_combined_policy(const ModelShape& shape,
                                                      const nlohmann::json& settings) {
  return std::make_unique<CombinedPolicy>(shape, settings);
}

}  // namespace wc::attention
