// See headcast_policy.h; the stores and re-casting rules are in layer_stores.h.
#include "engine/attention/headcast/headcast_policy.h"

#include <algorithm>

#include "engine/attention/ann/annsa_policy.h"
#include "engine/attention/dense_policy.h"
#include "engine/attention/headcast/classify_heads.h"
#include "engine/attention/tempcache/temp_cache_match.h"
#include "engine/core/error.h"

namespace wc::attention {
namespace {

constexpr const char* kWhere = "headcast settings";

bool same_thresholds(const CastThresholds& a, const CastThresholds& b) {
  return a.theta_dummy == b.theta_dummy && a.theta_sink == b.theta_sink &&
         a.theta_spatial == b.theta_spatial && a.theta_spatial_score == b.theta_spatial_score &&
         a.gamma == b.gamma && a.worst_token == b.worst_token;
}

}  // namespace

HeadCastPolicy::HeadCastPolicy(const ModelShape& shape, const nlohmann::json& settings)
    : shape_(shape),
      store_shape_{shape.batch, shape.head_dim, shape.geometry,
                   at::TensorOptions().dtype(shape.dtype).device(shape.device)},
      settings_(apply_cast_settings(default_cast_settings(shape), settings, shape, kWhere)) {
  make_ann_projections();
  reset();
}

void HeadCastPolicy::make_ann_projections() {
  ann_projections_.clear();
  if (!settings_.global_ann) return;
  // The annsa policy's projections, so a cast of only Global heads under global_ann attends as
  // annsa does over the same window.
  for (int layer = 0; layer < shape_.num_layers; ++layer) {
    ann_projections_.push_back(ann_head_projections(settings_.ann, layer, shape_.num_heads,
                                                    shape_.head_dim, shape_.device));
  }
}

at::Tensor HeadCastPolicy::global_ann_attention(int layer, const at::Tensor& q,
                                                const at::Tensor& keys, const at::Tensor& values,
                                                int64_t history, const std::vector<int>& heads) {
  const int64_t batch = q.size(0), count = q.size(1), d = q.size(3), rows = batch * count;
  const int64_t total = keys.size(2);
  std::vector<int64_t> indices(heads.begin(), heads.end());
  const at::Tensor index = at::tensor(indices, at::TensorOptions().dtype(at::kLong))
                               .to(ann_projections_[static_cast<size_t>(layer)].device());
  const at::Tensor projections = ann_projections_[static_cast<size_t>(layer)]
                                     .index_select(0, index)
                                     .unsqueeze(0)
                                     .expand({batch, count, d, settings_.ann.bits})
                                     .reshape({rows, d, settings_.ann.bits});
  const at::Tensor k = keys.reshape({rows, total, d});
  const at::Tensor v = values.reshape({rows, total, d});
  BucketAttentionInputs in;
  in.q = q.reshape({rows, -1, d});
  in.q_codes = lsh_codes(in.q, projections);
  in.keys = k.narrow(1, 0, history);
  in.values = v.narrow(1, 0, history);
  in.key_codes = lsh_codes(in.keys, projections);
  in.current_keys = k.narrow(1, history, total - history);
  in.current_values = v.narrow(1, history, total - history);
  in.bits = settings_.ann.bits;
  in.radius = settings_.ann.radius;
  in.tile = settings_.ann.tile;
  in.block = settings_.ann.block;
  return bucket_attention(in, &ann_counts_).view(q.sizes());
}

StoreLayout HeadCastPolicy::layout() const {
  return StoreLayout{FrameWindow{shape_.geometry.frames, settings_.window},
                     CellGrid::make(shape_.geometry, settings_.cell, settings_.cell_mode),
                     CellGrid::whole(shape_.geometry)};
}

void HeadCastPolicy::reset() {
  ann_counts_ = BucketAttentionCounts::zeros(shape_.device);
  layers_.clear();
  warmup_start_ = 0;
  blocks_committed_ = 0;
  const StoreLayout store_layout = layout();
  const auto forced = forced_cast(settings_, shape_);
  for (int l = 0; l < shape_.num_layers; ++l) {
    Layer layer;
    layer.stores = LayerStores(store_shape_, shape_.num_heads, store_layout);
    layer.evidence.assign(static_cast<size_t>(shape_.num_heads), HeadEvidence{});
    if (forced) {
      layer.stores.recast((*forced)[static_cast<size_t>(l)], store_layout, 0);
      layer.classified = true;
    }
    layers_.push_back(std::move(layer));
  }
}

int64_t HeadCastPolicy::classification_block() const {
  return wc::attention::classification_block(settings_, shape_.geometry, warmup_start_);
}

at::Tensor HeadCastPolicy::attend(int index, const at::Tensor& q, const at::Tensor& k,
                                  const at::Tensor& v, const StepInfo& step) {
  check_attention_inputs("headcast", shape_, index, q, k, v, step);
  Layer& layer = layers_[static_cast<size_t>(index)];
  const HistoryAttention global = [this, index](const at::Tensor& gq, const at::Tensor& keys,
                                                const at::Tensor& values, int64_t history,
                                                const std::vector<int>& heads) {
    return global_ann_attention(index, gq, keys, values, history, heads);
  };
  at::Tensor out = layer.stores.attend(q, k, v, timer_, step.heads_grouped,
                                       settings_.global_ann ? &global : nullptr);
  // Classification at the first block whose history holds the window (before any eviction), at
  // step classify_step, or on the clean pass when the rollout has fewer denoising steps; with
  // classify_every_step, at every step of that block from there on (Note [Every-step evidence]).
  const bool measuring_more = layer.evidence_pending && settings_.classify_every_step &&
                              step.block_index == layer.evidence_block;
  if (!layer.classified && (!layer.evidence_pending || measuring_more) &&
      settings_.cast.is_null() && step.block_index >= classification_block() &&
      (step.clean_pass || step.denoise_step >= settings_.classify_step)) {
    classify(layer, index, q, step.block_index, step.heads_grouped);
  }
  return out;
}

void HeadCastPolicy::classify(Layer& layer, int index, const at::Tensor& q, int64_t block,
                              bool grouped) {
  PathScope scope(timer_, "classify");
  const auto rows = sample_query_rows(shape_.geometry.tokens_per_block(), settings_.query_sample,
                                      settings_.seed * 1000003ull + static_cast<uint64_t>(index));
  const CellGrid cells = layout().spatial_cells;
  SpatialProxy proxy{settings_.radius, nullptr};
  if (settings_.spatial_proxy == SpatialProxyKind::kCells) proxy.cells = &cells;
  for (const WindowStore& store : layer.stores.windows()) {
    ClassifyInputs inputs;
    inputs.q = store.selection(grouped).gather(q);
    inputs.k = store.keys_with_current();
    inputs.v = store.values_with_current();
    inputs.slot_frames = store.slot_frames();
    const std::vector<int64_t> current = shape_.geometry.frames_of_block(block);
    inputs.slot_frames.insert(inputs.slot_frames.end(), current.begin(), current.end());
    inputs.geometry = shape_.geometry;
    inputs.block = block;
    const auto evidence = classify_heads(inputs, rows, proxy);
    const bool merge = layer.evidence_pending && layer.evidence_block == block;
    for (size_t p = 0; p < evidence.size(); ++p) {
      HeadEvidence& held = layer.evidence[static_cast<size_t>(store.heads()[p])];
      held = merge ? worst_evidence(held, evidence[p]) : evidence[p];
    }
  }
  layer.evidence_pending = true;
  layer.evidence_block = block;
}

std::vector<HeadType> HeadCastPolicy::decide(const Layer& layer) const {
  std::vector<HeadType> types;
  for (const HeadEvidence& e : layer.evidence) types.push_back(cast_head(e, settings_.thresholds));
  return types;
}

void HeadCastPolicy::commit(int index, const at::Tensor& k, const at::Tensor& v,
                            const StepInfo& step) {
  check_attention_inputs("headcast", shape_, index, k, k, v, step);
  Layer& layer = layers_[static_cast<size_t>(index)];
  if (step.commit_device_only) {
    layer.stores.commit_device(k, v, step.heads_grouped);
    return;
  }
  if (step.block_index != layer.blocks_committed) {
    throw Error("headcast", "layer " + std::to_string(index) + ": commit of block " +
                                std::to_string(step.block_index) + ", expected block " +
                                std::to_string(layer.blocks_committed));
  }
  layer.stores.commit(k, v, step.block_index, step.heads_grouped);
  layer.blocks_committed = step.block_index + 1;
  blocks_committed_ = std::max(blocks_committed_, layer.blocks_committed);
  if (layer.evidence_pending) {
    layer.stores.recast(decide(layer), layout(), layer.blocks_committed * shape_.geometry.frames);
    layer.evidence_pending = false;
    layer.classified = true;
  }
}

void HeadCastPolicy::configure(const nlohmann::json& json) {
  const CastSettings old = settings_;
  settings_ = apply_cast_settings(settings_, json, shape_, kWhere);
  if (settings_.global_ann != old.global_ann || settings_.ann.bits != old.ann.bits ||
      settings_.ann.seed != old.ann.seed) {
    make_ann_projections();
  }
  const bool layout_changed = old.window != settings_.window || old.cell != settings_.cell ||
                              old.cell_mode != settings_.cell_mode;
  if (settings_.cast != old.cast) {
    if (settings_.cast.is_null()) {
      reclassify();
      return;
    }
    const auto forced = forced_cast(settings_, shape_);
    for (size_t l = 0; l < layers_.size(); ++l) {
      Layer& layer = layers_[l];
      layer.stores.recast((*forced)[l], layout(), layer.blocks_committed * shape_.geometry.frames);
      layer.classified = true;
      layer.evidence_pending = false;
    }
    return;
  }
  const bool recast_thresholds =
      settings_.cast.is_null() && !same_thresholds(old.thresholds, settings_.thresholds);
  for (Layer& layer : layers_) {
    std::vector<HeadType> types = layer.stores.types();
    if (recast_thresholds && layer.classified) types = decide(layer);
    if (layout_changed || types != layer.stores.types()) {
      layer.stores.recast(types, layout(), layer.blocks_committed * shape_.geometry.frames);
    }
  }
}

nlohmann::json HeadCastPolicy::settings() const {
  return cast_settings_json(settings_);
}

void HeadCastPolicy::reclassify() {
  settings_.cast = nullptr;
  warmup_start_ = blocks_committed_;
  const StoreLayout store_layout = layout();
  for (Layer& layer : layers_) {
    // Note [Re-cast agreement]: a layer re-cast before its first cast was decided compares with
    // the last cast it had, if any.
    if (layer.classified) layer.previous_cast = layer.stores.types();
    layer.stores.recast(
        std::vector<HeadType>(static_cast<size_t>(shape_.num_heads), HeadType::kDense),
        store_layout, layer.blocks_committed * shape_.geometry.frames);
    layer.evidence.assign(static_cast<size_t>(shape_.num_heads), HeadEvidence{});
    layer.classified = false;
    layer.evidence_pending = false;
  }
}

const std::vector<int>* HeadCastPolicy::head_order(int layer) const {
  return &layers_.at(static_cast<size_t>(layer)).stores.head_order();
}

std::optional<uint64_t> HeadCastPolicy::attend_replay_key() const {
  if (timer_ != nullptr) return std::nullopt;     // timed paths need their host-side timer calls
  if (settings_.global_ann) return std::nullopt;  // AnnSA reads a count on the host per call
  ReplayKey key;
  for (const Layer& layer : layers_) {
    // attend() may classify until the cast is decided and applied.
    if (!layer.classified || layer.evidence_pending) return std::nullopt;
    layer.stores.add_to(key);
  }
  return key.value();
}

std::optional<uint64_t> HeadCastPolicy::block_replay_key(const StepInfo& clean) const {
  for (const Layer& layer : layers_) {
    if (layer.blocks_committed != clean.block_index ||
        !layer.stores.commit_keeps_layout(clean.block_index)) {
      return std::nullopt;
    }
  }
  return attend_replay_key();
}

void HeadCastPolicy::commit_host(const StepInfo& clean) {
  if (!block_replay_key(clean)) {
    throw Error("headcast", "commit_host for a commit that changes the stores (internal error)");
  }
  for (Layer& layer : layers_) {
    layer.stores.commit_host(clean.block_index);
    layer.blocks_committed = clean.block_index + 1;
  }
  blocks_committed_ = std::max(blocks_committed_, clean.block_index + 1);
}

PolicyStats HeadCastPolicy::stats() const {
  PolicyStats stats;
  stats.policy = "headcast";
  stats.blocks_committed = blocks_committed_;
  stats.classified = !layers_.empty();
  int64_t kept = 0, compared = 0;  // Note [Re-cast agreement]
  for (const Layer& layer : layers_) {
    stats.classified = stats.classified && layer.classified;
    if (layer.classified && layer.previous_cast.size() == layer.stores.types().size()) {
      for (size_t h = 0; h < layer.previous_cast.size(); ++h) {
        kept += layer.previous_cast[h] == layer.stores.types()[h];
        ++compared;
      }
    }
    std::vector<HeadStats> heads;
    for (size_t h = 0; h < layer.evidence.size(); ++h) {
      heads.push_back(
          HeadStats{layer.stores.types()[h], head_scores(layer.evidence[h], settings_.thresholds)});
    }
    stats.heads.push_back(std::move(heads));
    layer.stores.add_type_stats(stats);
  }
  if (stats.classified && compared > 0) {
    stats.recast_agreement = static_cast<double>(kept) / static_cast<double>(compared);
  }
  if (settings_.global_ann) read_ann_counts(ann_counts_, stats);
  return stats;
}

const std::vector<HeadType>& HeadCastPolicy::cast(int layer) const {
  return layers_.at(static_cast<size_t>(layer)).stores.types();
}

const HeadEvidence& HeadCastPolicy::evidence(int layer, int head) const {
  return layers_.at(static_cast<size_t>(layer)).evidence.at(static_cast<size_t>(head));
}

std::vector<int64_t> HeadCastPolicy::held_frames(int layer, int head) const {
  return layers_.at(static_cast<size_t>(layer)).stores.held_frames(head);
}

const LayerStores& HeadCastPolicy::layer_stores(int layer) const {
  return layers_.at(static_cast<size_t>(layer)).stores;
}

std::unique_ptr<AttentionPolicy> make_headcast_policy(const ModelShape& shape,
                                                      const nlohmann::json& settings) {
  return std::make_unique<HeadCastPolicy>(shape, settings);
}

}  // namespace wc::attention
