// See tempcache_policy.h.
#include "engine/attention/tempcache/tempcache_policy.h"

#include <algorithm>

#include "engine/attention/dense_policy.h"
#include "engine/attention/headcast/cast_settings.h"
#include "engine/core/error.h"

namespace wc::attention {
namespace {

constexpr const char* kWhere = "tempcache settings";

// Note [TempCache bounded by default]: the default window's worth of entries when no limit is set.
nlohmann::json bounded_by_default(const nlohmann::json& settings, const ModelShape& shape) {
  if (!settings.is_object() || tempcache_limit_given(settings)) return settings;
  nlohmann::json bounded = settings;
  bounded["budget_frames"] = default_cast_settings(shape).window;
  return bounded;
}

}  // namespace

uint64_t tempcache_store_seed(uint64_t seed, int layer, int store) {
  return seed * 1000003ull + static_cast<uint64_t>(layer) * 131ull + static_cast<uint64_t>(store);
}

void add_tempcache_stats(const TempCacheStore& store, HeadType type, int cells_per_head,
                         bool count_heads, PolicyStats& stats) {
  TypeStats& t = stats.per_type[static_cast<size_t>(type)];
  const auto entries = store.entries_per_group();
  const auto counts = store.count_sum_per_group();
  int64_t total_entries = 0;
  double total_count = 0.0;
  for (size_t g = 0; g < entries.size(); ++g) {
    total_entries += entries[g];
    total_count += counts[g];
  }
  // mean_group_size over all of this type's entries: fold the previous mean back into a sum.
  const double previous_count = t.mean_group_size * static_cast<double>(t.cached_tokens);
  if (count_heads) t.heads += store.groups() / cells_per_head;
  t.cached_tokens += total_entries / store.batch();
  t.cached_bytes += total_entries * store.bytes_per_entry();
  t.merges += store.merges();
  t.evictions += store.evictions();
  if (t.cached_tokens > 0) {
    t.mean_group_size =
        (previous_count + total_count / store.batch()) / static_cast<double>(t.cached_tokens);
  }
}

TempCachePolicy::TempCachePolicy(const ModelShape& shape, const nlohmann::json& settings)
    : shape_(shape),
      settings_(apply_tempcache_settings(TempCacheSettings{}, bounded_by_default(settings, shape),
                                         shape.geometry, true, kWhere)) {
  reset();
}

void TempCachePolicy::reset() {
  layers_.clear();
  const auto& g = shape_.geometry;
  const auto options = at::TensorOptions().dtype(shape_.dtype).device(shape_.device);
  for (int l = 0; l < shape_.num_layers; ++l) {
    layers_.emplace_back(shape_.batch, shape_.num_heads, g.tokens_per_frame(), g.frames,
                         shape_.head_dim, options, settings_, settings_.budget,
                         tempcache_store_seed(settings_.seed, l, 0));
  }
  layer_blocks_.assign(static_cast<size_t>(shape_.num_layers), 0);
  blocks_committed_ = 0;
}

at::Tensor TempCachePolicy::attend(int layer, const at::Tensor& q, const at::Tensor& k,
                                   const at::Tensor& v, const StepInfo& step) {
  check_attention_inputs("tempcache", shape_, layer, q, k, v, step);
  PathScope scope(timer_, "tempcache");
  return layers_[static_cast<size_t>(layer)].attend(q, k, v);
}

void TempCachePolicy::commit(int layer, const at::Tensor& k, const at::Tensor& v,
                             const StepInfo& step) {
  check_attention_inputs("tempcache", shape_, layer, k, k, v, step);
  if (step.commit_device_only) {  // the host half ran in commit_host
    layers_[static_cast<size_t>(layer)].commit_device(k, v);
    return;
  }
  int64_t& blocks = layer_blocks_[static_cast<size_t>(layer)];
  if (step.block_index != blocks) {
    throw Error("tempcache", "layer " + std::to_string(layer) + ": commit of block " +
                                 std::to_string(step.block_index) + ", expected block " +
                                 std::to_string(blocks));
  }
  layers_[static_cast<size_t>(layer)].commit(k, v,
                                             shape_.geometry.frames_of_block(step.block_index));
  blocks = step.block_index + 1;
  blocks_committed_ = std::max(blocks_committed_, blocks);
}

std::optional<uint64_t> TempCachePolicy::attend_replay_key() const {
  if (timer_ != nullptr) return std::nullopt;  // timed paths need their host-side timer calls
  ReplayKey key;
  for (const TempCacheStore& store : layers_) store.add_to(key);
  return key.value();
}

std::optional<uint64_t> TempCachePolicy::block_replay_key(const StepInfo& clean) const {
  for (size_t l = 0; l < layers_.size(); ++l) {
    if (layer_blocks_[l] != clean.block_index || !layers_[l].commit_keeps_layout()) {
      return std::nullopt;
    }
  }
  return attend_replay_key();
}

void TempCachePolicy::commit_host(const StepInfo& clean) {
  if (!block_replay_key(clean)) {
    throw Error("tempcache", "commit_host for a commit that changes the stores (internal error)");
  }
  for (size_t l = 0; l < layers_.size(); ++l) {
    layers_[l].commit_host(shape_.geometry.frames_of_block(clean.block_index));
    layer_blocks_[l] = clean.block_index + 1;
  }
  blocks_committed_ = std::max(blocks_committed_, clean.block_index + 1);
}

PolicyStats TempCachePolicy::stats() const {
  PolicyStats stats;
  stats.policy = "tempcache";
  stats.blocks_committed = blocks_committed_;
  for (const TempCacheStore& store : layers_) {
    stats.heads.emplace_back(static_cast<size_t>(shape_.num_heads), HeadStats{});
    add_tempcache_stats(store, HeadType::kDense, 1, true, stats);
  }
  return stats;
}

void TempCachePolicy::configure(const nlohmann::json& json) {
  settings_ = apply_tempcache_settings(settings_, json, shape_.geometry, true, kWhere);
  for (TempCacheStore& store : layers_) store.reconfigure(settings_, settings_.budget);
}

nlohmann::json TempCachePolicy::settings() const {
  return tempcache_settings_json(settings_, true);
}

std::unique_ptr<AttentionPolicy> make_tempcache_policy(const ModelShape& shape,
                                                       const nlohmann::json& settings) {
  return std::make_unique<TempCachePolicy>(shape, settings);
}

}  // namespace wc::attention
