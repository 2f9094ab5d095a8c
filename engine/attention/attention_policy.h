// The contract between the model and every KV-cache / attention strategy (DESIGN.md §5, §6).
// One policy object serves all layers of one Session.
#pragma once

#include <ATen/ATen.h>

#include <cstdint>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "engine/attention/path_timer.h"
#include "engine/attention/policy_stats.h"
#include "engine/attention/step_info.h"
#include "engine/core/error.h"

namespace wc::attention {

// Fixed facts about the model a policy serves; tensors it receives match them.
struct ModelShape {
  int num_layers = 1;
  int num_heads = 1;
  int head_dim = 64;
  int batch = 1;
  BlockGeometry geometry;  // the block geometry of the rollout
  at::Device device = at::kCPU;
  at::ScalarType dtype = at::kFloat;  // dtype of q/k/v and of the stores
};

// Whether `tensor` lives on `device`, where a device without an index ("cuda") means the current
// device of its type, as LibTorch allocates it.
inline bool on_device(const at::Tensor& tensor, const at::Device& device) {
  return tensor.device().type() == device.type() &&
         (!device.has_index() || tensor.device().index() == device.index());
}

class AttentionPolicy {
 public:
  virtual ~AttentionPolicy() = default;

  virtual std::string name() const = 0;

  // Attention of the current block's tokens against the cached history. q, k, v: [B, H, T, D]
  // post-RoPE with T = step.geometry.tokens_per_block(); returns [B, H, T, D]. Bidirectional
  // inside the block, causal across blocks: history never contains the current block.
  virtual at::Tensor attend(int layer, const at::Tensor& q, const at::Tensor& k,
                            const at::Tensor& v, const StepInfo& step) = 0;

  // After the clean pass: writes the block's K/V ([B, H, T, D]) into this layer's stores.
  virtual void commit(int layer, const at::Tensor& k, const at::Tensor& v,
                      const StepInfo& step) = 0;

  virtual PolicyStats stats() const = 0;

  // Forgets all history and every cast (a new rollout).
  virtual void reset() = 0;

  // Applies settings (a JSON object of this policy's keys; unknown keys or bad values throw
  // wc::Error naming the key). Call between blocks only. Keys not given keep their value.
  virtual void configure(const nlohmann::json& settings) = 0;
  virtual nlohmann::json settings() const = 0;

  // Drops the cast and classifies again after a fresh warm-up (no-op for uncast policies).
  virtual void reclassify() {}

  // Note [Replayed attention]
  // A key of the device work attend() does for every layer of a denoising pass: two equal keys
  // promise the same kernels on the same buffers with the same shapes, and that attend() does
  // no host-side work of its own (no classification, no bookkeeping), so a recorded pass (a
  // CUDA graph) may be replayed instead of calling attend() again. nullopt while that does not
  // hold (warm-up, a cast still to be decided) or where the policy does not offer it. commit()
  // is never replayed: it runs, eagerly, after every block.
  virtual std::optional<uint64_t> attend_replay_key() const { return std::nullopt; }

  // Note [Replayed commit]
  // A whole block (its denoising passes and its clean pass with commits) can be replayed when
  // commit() splits into a host half (bookkeeping: which slots the block's frames go to) and a
  // device half whose kernels and buffers are the same every block, reading per-block values
  // (slot indices) from device buffers the host half fills. block_replay_key is the attention's
  // replay key when the commit of the clean pass `clean` would keep every store's layout (no
  // growth, compaction, merge or re-cast), else nullopt. To replay a block: commit_host(clean),
  // then the recorded passes, whose commit() calls carry step.commit_device_only. The host half
  // before the block's attention is sound because attention reads no host bookkeeping, only the
  // held counts, which a layout-keeping commit leaves as they are.
  virtual std::optional<uint64_t> block_replay_key(const StepInfo& clean) const {
    (void)clean;
    return std::nullopt;
  }
  virtual void commit_host(const StepInfo& clean) {
    (void)clean;
    throw Error(name(), "commit_host: this policy offers no replayed commit");
  }

  // Note [Head order]
  // A policy that splits a layer's heads into groups (HeadCast's types) gathers each group's
  // heads out of q, k, v and scatters its results back: one extra pass over q, k, v and the output
  // per attention call. head_order(layer) is an order of the layer's heads (position j holds head
  // order[j]) in which every group is one contiguous range, so that gathers become views; nullptr
  // where the policy has none. A caller that can produce q, k, v in that order (the model permutes
  // its projection weights once per order) sets StepInfo::heads_grouped: attend() and commit()
  // then take q, k, v and return the output in that order. The order may change only in commit()
  // and configure() (a re-cast), so asking for it before a layer's attend() gives the order that
  // attend() and the clean pass's commit() of that layer use. With the flag unset, or where
  // head_order() is nullptr, the model's own order holds.
  virtual const std::vector<int>* head_order(int layer) const {
    (void)layer;
    return nullptr;
  }

  // Optional instrumentation: the policy brackets each attention path with timer->begin/end.
  void set_path_timer(PathTimer* timer) { timer_ = timer; }

 protected:
  PathTimer* timer_ = nullptr;
};

}  // namespace wc::attention
