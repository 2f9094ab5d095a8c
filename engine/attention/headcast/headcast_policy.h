// HeadCast (DESIGN.md §6): dense warm-up, a one-time classification of every head as Sink, Dummy,
// Spatial or Global, then per-type KV stores and attention paths; thresholds re-cast live.
#pragma once

#include <memory>
#include <vector>

#include "engine/attention/ann/bucket_attention.h"
#include "engine/attention/attention_policy.h"
#include "engine/attention/headcast/cast_settings.h"
#include "engine/attention/headcast/head_cast.h"
#include "engine/attention/stores/layer_stores.h"

namespace wc::attention {

class HeadCastPolicy : public AttentionPolicy {
 public:
  HeadCastPolicy(const ModelShape& shape, const nlohmann::json& settings);

  std::string name() const override { return "headcast"; }
  at::Tensor attend(int layer, const at::Tensor& q, const at::Tensor& k, const at::Tensor& v,
                    const StepInfo& step) override;
  void commit(int layer, const at::Tensor& k, const at::Tensor& v, const StepInfo& step) override;
  PolicyStats stats() const override;
  const std::vector<int>* head_order(int layer) const override;
  std::optional<uint64_t> attend_replay_key() const override;
  std::optional<uint64_t> block_replay_key(const StepInfo& clean) const override;
  void commit_host(const StepInfo& clean) override;
  void reset() override;
  // Thresholds re-cast classified heads from their stored evidence; window / cell changes re-file
  // every store; a forced "cast" re-casts at once and "cast": null after a forced cast
  // re-classifies. radius, classify_*, query_sample and seed act at the next classification.
  void configure(const nlohmann::json& settings) override;
  nlohmann::json settings() const override;
  void reclassify() override;

  const CastSettings& cast_settings() const { return settings_; }
  const std::vector<HeadType>& cast(int layer) const;
  const HeadEvidence& evidence(int layer, int head) const;
  // The frames head `head` of `layer` holds, ascending (what its attention sees besides the block).
  std::vector<int64_t> held_frames(int layer, int head) const;
  // The block at which online classification runs (or ran) for the current warm-up.
  int64_t classification_block() const;
  const LayerStores& layer_stores(int layer) const;

 private:
  struct Layer {
    LayerStores stores;
    std::vector<HeadEvidence> evidence;
    bool classified = false;
    bool evidence_pending = false;  // measured this block; the cast applies after its commit
    int64_t evidence_block = -1;    // the block measured (every step of it may add evidence)
    int64_t blocks_committed = 0;
    // The cast a reclassify() replaced (empty before one): Note [Re-cast agreement].
    std::vector<HeadType> previous_cast;
  };

  StoreLayout layout() const;
  void classify(Layer& layer, int index, const at::Tensor& q, int64_t block, bool grouped);
  // AnnSA on the Global heads (CastSettings::global_ann): the projections of every layer's heads
  // and the Global path that uses them.
  void make_ann_projections();
  at::Tensor global_ann_attention(int layer, const at::Tensor& q, const at::Tensor& keys,
                                  const at::Tensor& values, int64_t history,
                                  const std::vector<int>& heads);
  std::vector<HeadType> decide(const Layer& layer) const;

  ModelShape shape_;
  StoreShape store_shape_;
  CastSettings settings_;
  std::vector<Layer> layers_;
  int64_t warmup_start_ = 0;
  int64_t blocks_committed_ = 0;
  std::vector<at::Tensor> ann_projections_;  // [layer] [H, D, bits], when global_ann
  BucketAttentionCounts ann_counts_;
};

std::unique_ptr<AttentionPolicy> make_headcast_policy(const ModelShape& shape,
                                                      const nlohmann::json& settings);

}  // namespace wc::attention
