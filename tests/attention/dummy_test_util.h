// Shared by the CPU and GPU tests of the `dummy` policy: a rollout driver that keeps the whole
// history, the explicit per-head masks each head type implies, and planted-mass inputs.
#pragma once

#include <ATen/ATen.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "engine/attention/attention_policy.h"
#include "engine/attention/headcast/head_type.h"
#include "engine/attention/sdpa.h"

namespace wc::attention::testing {

// Boolean [T, n·T + T] mask over [history ; current] of one head whose type is `type`, after
// `committed` blocks, with `context_blocks` blocks kept by Neighbour (and warm-up) heads.
inline at::Tensor head_mask(HeadType type, const BlockGeometry& g, int64_t committed,
                            int64_t context_blocks) {
  const int64_t nf = g.tokens_per_frame();
  const int64_t t = g.tokens_per_block();
  const int64_t history = committed * t;
  at::Tensor allowed = at::zeros({history + t}, at::kBool);
  allowed.narrow(0, history, t).fill_(true);
  const int64_t recent = std::min(committed, context_blocks) * t;
  if (committed > 0) {
    switch (type) {
      case HeadType::kDense:  // warm-up: frame 0 + the last blocks
        allowed.narrow(0, 0, nf).fill_(true);
        allowed.narrow(0, history - recent, recent).fill_(true);
        break;
      case HeadType::kSink:
        allowed.narrow(0, 0, nf).fill_(true);
        break;
      case HeadType::kDummy:  // the last latent frame of the latest block
        allowed.narrow(0, history - nf, nf).fill_(true);
        break;
      case HeadType::kNeighbour:
        allowed.narrow(0, history - recent, recent).fill_(true);
        break;
      default:
        break;
    }
  }
  return allowed.unsqueeze(0).expand({t, history + t});
}

// Drives a policy block by block and keeps every committed K/V, so that each attend() can be
// compared with reference attention over the full history under the explicit mask.
class Rollout {
 public:
  Rollout(AttentionPolicy& policy, const ModelShape& shape) : policy_(policy), shape_(shape) {
    history_k_.resize(static_cast<size_t>(shape.num_layers));
    history_v_.resize(static_cast<size_t>(shape.num_layers));
  }

  StepInfo step(bool clean) const {
    StepInfo s;
    s.block_index = blocks_;
    s.denoise_step = clean ? 1 : 0;
    s.num_denoise_steps = 1;
    s.noise_level = clean ? 0.0 : 1.0;
    s.clean_pass = clean;
    s.geometry = shape_.geometry;
    return s;
  }

  // Reference output of `layer` for the heads typed as in `types` (the cast before this call).
  at::Tensor reference(int layer, const std::vector<HeadType>& types, const at::Tensor& q,
                       const at::Tensor& k, const at::Tensor& v, int64_t context_blocks) const {
    const auto l = static_cast<size_t>(layer);
    at::Tensor keys = history_k_[l].defined() ? at::cat({history_k_[l], k.cpu()}, 2) : k.cpu();
    at::Tensor values = history_v_[l].defined() ? at::cat({history_v_[l], v.cpu()}, 2) : v.cpu();
    std::vector<at::Tensor> masks;
    for (HeadType type : types) {
      masks.push_back(head_mask(type, shape_.geometry, blocks_, context_blocks));
    }
    const at::Tensor mask = at::stack(masks).unsqueeze(0).expand(
        {q.size(0), static_cast<int64_t>(types.size()), q.size(2), keys.size(2)});
    return reference_attention(q.cpu().to(at::kFloat), keys.to(at::kFloat), values.to(at::kFloat),
                               mask);
  }

  void commit(int layer, const at::Tensor& k, const at::Tensor& v) {
    policy_.commit(layer, k, v, step(true));
    const auto l = static_cast<size_t>(layer);
    history_k_[l] = history_k_[l].defined() ? at::cat({history_k_[l], k.cpu()}, 2) : k.cpu();
    history_v_[l] = history_v_[l].defined() ? at::cat({history_v_[l], v.cpu()}, 2) : v.cpu();
  }
  void next_block() { ++blocks_; }
  int64_t blocks() const { return blocks_; }

 private:
  AttentionPolicy& policy_;
  ModelShape shape_;
  int64_t blocks_ = 0;
  std::vector<at::Tensor> history_k_, history_v_;
};

// Where a planted head puts its attention mass in the classifying block (block 1).
enum class Plant { kFrameZero, kNeighbour, kCurrent };

// q/k/v of one layer for block 0 or 1 (CPU float32): keys and queries of a planted head share a
// strong direction u_h in the segment it should attend to, everything else is weak noise.
inline void planted_block(int64_t block, const std::vector<Plant>& plants, const ModelShape& shape,
                          const std::vector<at::Tensor>& directions, at::Tensor& q, at::Tensor& k,
                          at::Tensor& v) {
  constexpr double kStrength = 6.0;
  constexpr double kNoise = 0.3;
  const int64_t nf = shape.geometry.tokens_per_frame();
  const int64_t t = shape.geometry.tokens_per_block();
  const int64_t b = shape.batch;
  const int64_t d = shape.head_dim;
  q = at::randn({b, shape.num_heads, t, d}) * kNoise;
  k = at::randn({b, shape.num_heads, t, d}) * kNoise;
  v = at::randn({b, shape.num_heads, t, d});
  for (size_t h = 0; h < plants.size(); ++h) {
    const at::Tensor u = directions[h] * kStrength;
    const auto head = static_cast<int64_t>(h);
    auto plant = [&](at::Tensor& x, int64_t begin, int64_t length) {
      x.select(1, head).narrow(1, begin, length).add_(u);
    };
    if (block == 0 && plants[h] == Plant::kFrameZero) plant(k, 0, nf);
    if (block == 0 && plants[h] == Plant::kNeighbour) plant(k, nf, t - nf);
    if (block == 1) plant(q, 0, t);
    if (block == 1 && plants[h] == Plant::kCurrent) plant(k, 0, t);
  }
}

inline double relative_error(const at::Tensor& got, const at::Tensor& expected) {
  const at::Tensor g = got.cpu().to(at::kDouble);
  const at::Tensor e = expected.cpu().to(at::kDouble);
  return (g - e).norm().item<double>() / std::max(e.norm().item<double>(), 1e-30);
}

}  // namespace wc::attention::testing
