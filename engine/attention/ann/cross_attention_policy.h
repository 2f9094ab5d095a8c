// Cross-attention of a block's tokens to a prompt's tokens (Wan 2.1's text conditioning) behind a
// policy of its own: "dense" attends to every prompt token, "annca" (FAST-AR's AnnCA) only to the
// tokens that share an LSH bucket with some query of the same frame. See Note [AnnCA].
#pragma once

#include <ATen/ATen.h>

#include <cstdint>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "engine/attention/attention_policy.h"

namespace wc::attention {

// Note [AnnCA]
// A long prompt (512 tokens for Wan) conditions every frame, but a frame's queries draw on a few
// of its tokens. AnnCA hashes the queries and the prompt's keys with `tables` tables of `bits`
// sign bits of seeded random projections (the same projections for both, per head) and keeps, for
// each frame, the prompt tokens that share a bucket with at least one of the frame's queries in
// at least one table; the rest are pruned for that frame. So that no frame attends to nothing,
// the `min_kept` tokens its mean query scores highest are always kept too. Each frame then
// attends to its kept tokens in one call over all frames and heads (kept tokens gathered,
// padded to the largest count with the pad bias of Note [TempCache bias]). The rule is
// annca_mask(); the reference applies it to dense attention; with min_kept ≥ the prompt's
// length every token is kept and AnnCA is dense cross-attention. The price is one host read per
// call (the largest kept count, which fixes the gathered shape).

// The prompt's share a call attended, summed on the device (float64 scalars).
struct CrossAttentionCounts {
  at::Tensor prompt_pairs;  // (frame, head, prompt token) triples dense attention would attend
  at::Tensor kept_pairs;    // those AnnCA kept
  static CrossAttentionCounts zeros(const at::Device& device);
};

struct CrossStats {
  std::string policy;
  double prompt_pairs = 0.0;
  double kept_pairs = 0.0;
  // The share of (frame, head, prompt token) triples attended (1 = dense).
  double kept_share() const { return prompt_pairs > 0.0 ? kept_pairs / prompt_pairs : 1.0; }
};

class CrossAttentionPolicy {
 public:
  virtual ~CrossAttentionPolicy() = default;
  virtual std::string name() const = 0;
  // q [B, H, T, D] (T = frames · tokens per frame, frame-major), the prompt's k, v [B, H, L, D]
  // -> [B, H, T, D].
  virtual at::Tensor attend(int layer, const at::Tensor& q, const at::Tensor& k,
                            const at::Tensor& v, const StepInfo& step) = 0;
  // Whether attend() does no host-side work of its own, so a recorded block may replay it (Note
  // [Replayed attention]): dense's does none; AnnCA reads its kept count back.
  virtual bool replayable() const = 0;
  virtual CrossStats stats() const = 0;
  virtual void reset() = 0;
  // Applies settings (unknown keys or bad values throw wc::Error naming the key and its range;
  // nothing changes then). Between blocks only.
  virtual void configure(const nlohmann::json& settings) = 0;
  virtual nlohmann::json settings() const = 0;
};

// AnnCA's settings: "bits" [1, 12], "tables" [1, 16], "min_kept" [1, 4096], "seed".
struct AnnCaSettings {
  int bits = 8;
  int tables = 2;
  int64_t min_kept = 16;
  uint64_t seed = 0;
};

// The rule of Note [AnnCA]: [R, F, L] bool, whether frame f of row r keeps prompt token l.
// q [R, F·N, D], k [R, L, D]; projections: `tables` tensors [R, D, bits].
at::Tensor annca_keep(const at::Tensor& q, const at::Tensor& k,
                      const std::vector<at::Tensor>& projections, int frames, int64_t min_kept);

// Attention of each frame's queries to its kept prompt tokens, gathered (the fast path), and
// the float32 reference with the rule as an explicit mask. q [R, F·N, D], k / v [R, L, D],
// keep [R, F, L] -> [R, F·N, D] in q's dtype.
at::Tensor kept_cross_attention(const at::Tensor& q, const at::Tensor& k, const at::Tensor& v,
                                const at::Tensor& keep);
at::Tensor kept_cross_attention_reference(const at::Tensor& q, const at::Tensor& k,
                                          const at::Tensor& v, const at::Tensor& keep);

// "dense" or "annca" for a model of `shape` (settings as above; {} for dense).
std::unique_ptr<CrossAttentionPolicy> create_cross_policy(const std::string& name,
                                                          const ModelShape& shape,
                                                          const nlohmann::json& settings);
std::vector<std::string> cross_policy_names();

}  // namespace wc::attention
