// The dense baseline: a sliding window with a fixed sink (the first block is never evicted, the
// most recent frames roll; DESIGN.md §6). Settings: {"window": frames, 0 = unbounded}.
#pragma once

#include <memory>
#include <vector>

#include "engine/attention/attention_policy.h"
#include "engine/attention/stores/window_store.h"

namespace wc::attention {

class DensePolicy : public AttentionPolicy {
 public:
  DensePolicy(const ModelShape& shape, const nlohmann::json& settings);

  std::string name() const override { return "dense"; }
  at::Tensor attend(int layer, const at::Tensor& q, const at::Tensor& k, const at::Tensor& v,
                    const StepInfo& step) override;
  void commit(int layer, const at::Tensor& k, const at::Tensor& v, const StepInfo& step) override;
  PolicyStats stats() const override;
  std::optional<uint64_t> attend_replay_key() const override;
  std::optional<uint64_t> block_replay_key(const StepInfo& clean) const override;
  void commit_host(const StepInfo& clean) override;
  void reset() override;
  void configure(const nlohmann::json& settings) override;
  nlohmann::json settings() const override;

  int64_t window() const { return window_; }
  const WindowStore& store(int layer) const { return layers_.at(static_cast<size_t>(layer)); }

 private:
  ModelShape shape_;
  StoreShape store_shape_;
  int64_t window_ = 0;
  int64_t blocks_committed_ = 0;
  std::vector<WindowStore> layers_;
};

std::unique_ptr<AttentionPolicy> make_dense_policy(const ModelShape& shape,
                                                   const nlohmann::json& settings);

// Checks a layer index and q/k/v against the model shape and step geometry (wc::Error if not).
void check_attention_inputs(const char* policy, const ModelShape& shape, int layer,
                            const at::Tensor& q, const at::Tensor& k, const at::Tensor& v,
                            const StepInfo& step);

}  // namespace wc::attention
