// TempCache (FAST-AR, DESIGN.md §6): every head keeps a compressed history of (key, mean value,
// count) entries; temporally redundant keys merge at commit, attention adds log n per entry, and a
// hard per-head budget bounds memory and per-block cost. Settings: tempcache_settings.h; storage:
// temp_cache_store.h.
#pragma once

#include <memory>
#include <vector>

#include "engine/attention/attention_policy.h"
#include "engine/attention/stores/temp_cache_store.h"
#include "engine/attention/tempcache/tempcache_settings.h"

namespace wc::attention {

class TempCachePolicy : public AttentionPolicy {
 public:
  TempCachePolicy(const ModelShape& shape, const nlohmann::json& settings);

  std::string name() const override { return "tempcache"; }
  at::Tensor attend(int layer, const at::Tensor& q, const at::Tensor& k, const at::Tensor& v,
                    const StepInfo& step) override;
  void commit(int layer, const at::Tensor& k, const at::Tensor& v, const StepInfo& step) override;
  PolicyStats stats() const override;
  // Replayable once every layer's store has reached its budget or window (Note [Replayed commit]).
  std::optional<uint64_t> attend_replay_key() const override;
  std::optional<uint64_t> block_replay_key(const StepInfo& clean) const override;
  void commit_host(const StepInfo& clean) override;
  void reset() override;
  // Every key applies at once to the existing history (a smaller budget or window evicts now).
  void configure(const nlohmann::json& settings) override;
  nlohmann::json settings() const override;

  const TempCacheSettings& tempcache_settings() const { return settings_; }
  const TempCacheStore& store(int layer) const { return layers_.at(static_cast<size_t>(layer)); }

 private:
  ModelShape shape_;
  TempCacheSettings settings_;
  std::vector<TempCacheStore> layers_;

  std::vector<int64_t> layer_blocks_;
  int64_t blocks_committed_ = 0;
};

std::unique_ptr<AttentionPolicy> make_tempcache_policy(const ModelShape& shape,
                                                       const nlohmann::json& settings);

// The seed of a store's projections: one stream per (policy seed, layer, store).
uint64_t tempcache_store_seed(uint64_t seed, int layer, int store);

// Adds a store's entries to `stats` under `type`; `count_heads` also adds its heads (groups /
// cells_per_head), false for the second and later cell groups of the same spatial heads.
void add_tempcache_stats(const TempCacheStore& store, HeadType type, int cells_per_head,
                         bool count_heads, PolicyStats& stats);

}  // namespace wc::attention
