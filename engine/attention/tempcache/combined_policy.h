// HeadCast + TempCache ("combined", DESIGN.md §6): HeadCast's warm-up, classification and cast,
// with the Global and Spatial heads' windows kept as TempCache stores (Spatial: one compressed
// history per cell), so those heads can afford a long or unbounded memory at bounded cost;
// Sink+Dummy heads keep HeadCast's one-block store. Settings: every headcast key plus the
// tempcache keys (cast_settings.h, tempcache_settings.h); "window" is shared.
#pragma once

#include <memory>
#include <vector>

#include "engine/attention/attention_policy.h"
#include "engine/attention/headcast/cast_settings.h"
#include "engine/attention/headcast/head_cast.h"
#include "engine/attention/headcast/head_groups.h"
#include "engine/attention/headcast/headcast_policy.h"
#include "engine/attention/headcast/spatial_cells.h"
#include "engine/attention/stores/sink_dummy_store.h"
#include "engine/attention/stores/temp_cache_store.h"
#include "engine/attention/tempcache/tempcache_settings.h"

namespace wc::attention {

// Note [Combined take-over]
// Until a layer is cast it runs inside a private HeadCastPolicy (dense warm-up, online
// classification, or a forced cast applied at once). Right after the commit that casts it, the
// layer is taken over: the Sink+Dummy store is kept as it is, and the frames HeadCast holds for
// each Global / Spatial head are committed, oldest first, into that head's TempCache store (so the
// warm-up history is compressed by the same rules). When every layer is taken over the inner
// policy is released. With tau = 1 and no budget nothing merges and each store holds exactly
// HeadCast's window, so combined equals headcast (tested). The compressed history cannot be turned
// back into frames: headcast keys (thresholds, window, cells, cast) can change only before the
// first commit, and reclassify() restarts the rollout's memory. Tempcache keys apply live.
class CombinedPolicy : public AttentionPolicy {
 public:
  CombinedPolicy(const ModelShape& shape, const nlohmann::json& settings);

  std::string name() const override { return "headcast+tempcache"; }
  at::Tensor attend(int layer, const at::Tensor& q, const at::Tensor& k, const at::Tensor& v,
                    const StepInfo& step) override;
  void commit(int layer, const at::Tensor& k, const at::Tensor& v, const StepInfo& step) override;
  PolicyStats stats() const override;
  // Replayable once every layer is taken over and its TempCache stores have reached their
  // budget or window (Note [Replayed commit]).
  std::optional<uint64_t> attend_replay_key() const override;
  std::optional<uint64_t> block_replay_key(const StepInfo& clean) const override;
  void commit_host(const StepInfo& clean) override;
  void reset() override;
  void configure(const nlohmann::json& settings) override;
  nlohmann::json settings() const override;
  void reclassify() override;

  const std::vector<HeadType>& cast(int layer) const;

 private:
  struct SpatialStore {
    CellGroup group;
    TempCacheStore store;
  };
  struct Layer {
    bool taken_over = false;
    std::vector<HeadType> types;
    std::vector<HeadEvidence> evidence;
    HeadSelection global_heads, spatial_heads;
    std::vector<TempCacheStore> global;  // empty or one store
    std::vector<SpatialStore> spatial;   // one per cell group
    SinkDummyStore sink_dummy;
    int64_t blocks_committed = 0;
  };

  void take_over(int index);
  void release_inner_when_done();
  int64_t row_budget(int64_t row_tokens) const;
  void apply(const nlohmann::json& json);

  ModelShape shape_;
  StoreShape store_shape_;
  CastSettings cast_settings_;
  TempCacheSettings temp_settings_;
  std::unique_ptr<HeadCastPolicy> inner_;
  std::vector<Layer> layers_;
  int64_t blocks_committed_ = 0;
};

std::unique_ptr<AttentionPolicy> make_combined_policy(const ModelShape& shape,
                                                      const nlohmann::json& settings);

}  // namespace wc::attention
