// AnnSA and FAST-AR (DESIGN.md §6, the second seed): every head attends to the history keys of its
// queries' LSH buckets and to the whole current block (Note [AnnSA tiles]). "annsa" keeps the
// dense baseline's history (a sliding window with sink); "fast-ar" keeps TempCache's merged,
// bounded history and buckets it the same way, as the paper combines them (TempCache + AnnSA; a
// model with cross-attention adds AnnCA there). Settings: the history's own keys ("window" for
// annsa, the tempcache keys for fast-ar) plus the ann_* keys of ann_settings.h.
#pragma once

#include <memory>
#include <vector>

#include "engine/attention/ann/ann_settings.h"
#include "engine/attention/ann/bucket_attention.h"
#include "engine/attention/attention_policy.h"
#include "engine/attention/dense_policy.h"
#include "engine/attention/tempcache/tempcache_policy.h"

namespace wc::attention {

class AnnsaPolicy : public AttentionPolicy {
 public:
  // `merged`: TempCache's history (fast-ar) instead of the dense window (annsa).
  AnnsaPolicy(const ModelShape& shape, const nlohmann::json& settings, bool merged);

  std::string name() const override { return merged_ ? "fast-ar" : "annsa"; }
  at::Tensor attend(int layer, const at::Tensor& q, const at::Tensor& k, const at::Tensor& v,
                    const StepInfo& step) override;
  void commit(int layer, const at::Tensor& k, const at::Tensor& v, const StepInfo& step) override;
  PolicyStats stats() const override;
  void reset() override;
  // The ann_* keys apply from the next attention call; the history's keys as its own policy
  // applies them. Nothing changes when any key is refused.
  void configure(const nlohmann::json& settings) override;
  nlohmann::json settings() const override;

  const AnnSettings& ann_settings() const { return ann_; }

 private:
  // The layer's history as bucket attention takes it, with the query side filled from q, k, v.
  BucketAttentionInputs inputs(int layer, const at::Tensor& q, const at::Tensor& k,
                               const at::Tensor& v) const;
  void make_projections();

  ModelShape shape_;
  AnnSettings ann_;
  std::unique_ptr<TempCachePolicy> merged_;
  std::unique_ptr<DensePolicy> window_;
  std::vector<at::Tensor> projections_;  // per layer [B·H, D, bits]
  BucketAttentionCounts counts_;
};

// AnnSA's per-head projections of `layer`, [heads, D, bits]: the annsa and fast-ar policies and
// HeadCast's Global heads under global_ann all hash with these, so they bucket alike.
at::Tensor ann_head_projections(const AnnSettings& settings, int layer, int64_t heads,
                                int64_t head_dim, const at::Device& device);

// `counts` read into `stats.ann` (one host read per counter).
void read_ann_counts(const BucketAttentionCounts& counts, PolicyStats& stats);

std::unique_ptr<AttentionPolicy> make_annsa_policy(const ModelShape& shape,
                                                   const nlohmann::json& settings);
std::unique_ptr<AttentionPolicy> make_fast_ar_policy(const ModelShape& shape,
                                                     const nlohmann::json& settings);

}  // namespace wc::attention
