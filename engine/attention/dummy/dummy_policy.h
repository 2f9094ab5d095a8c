// The `dummy` policy: the Dummy Forcing baseline (arXiv 2601.20499) as its official code behaves
// (algorithms.md §2.3, DESIGN.md §6). Created through the registry as "dummy".
//
// Warm-up: every head attends densely to [latent frame 0 ; the last `context_blocks` blocks ;
// current] (after block 0 the "last block" is frames 1..F-1, frame 0 being the sink).
// Classification: on the clean pass of the block that arrives after `classify_block` committed
// blocks, every layer samples query rows (uniformly, with replacement, seeded) and measures per
// head the softmax mass on frame 0 (p_first) and on the neighbour frames (p_mid). Once every
// layer has measured and committed that block, program_dummy_heads() casts all L·H heads: the
// `num_dummy` with the smallest max(P0, P1) become Dummy, the others Sink (P0 >= P1) or Neighbour.
// After the cast each layer runs two attention calls: Sink+Dummy heads packed into one call over
// [one stored frame ; current] (Sink: frame 0, frozen; Dummy: the last latent frame of the most
// recent block, overwritten at every commit), and Neighbour heads over [last context_blocks
// blocks ; current]. Timed paths: "dense" and "classify" (warm-up), then "gather", "sink_dummy",
// "neighbour", "scatter".
//
// Stats: HeadStats::scores.sink holds P0 (the head's normalised mass on frame 0) and
// HeadStats::scores.dummy holds P1 (its normalised mass on the neighbour frames); both are NaN
// until classified and for a forced cast. Heads report kDense before the cast.
//
// Settings (JSON object):
//   "num_dummy"      Dummy heads over all layers (default L·H/2), in [0, L·H]
//   "classify_block" committed blocks before the classifying clean pass (default 1), >= 1
//   "query_sample"   query rows sampled per layer (default 0 = N_f/3, at least 1)
//   "context_blocks" blocks kept by Neighbour heads (default 1)
//   "seed"           seed of the row sampling (default 0)
//   "cast"           null, or a forced cast that skips warm-up and classification:
//                    {"mix": [n_sink, n_dummy, n_neighbour]} (every layer; heads in that order)
//                    or {"layers": [["sink", "dummy", "neighbour", ...], ...]} (L rows of H)
// Changing num_dummy, classify_block, context_blocks or cast drops the history (a new warm-up);
// seed and query_sample only affect a classification still to come.
#pragma once

#include <ATen/ATen.h>

#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "engine/attention/attention_policy.h"
#include "engine/attention/dummy/dummy_settings.h"

namespace wc::attention {

class DummyPolicy final : public AttentionPolicy {
 public:
  DummyPolicy(const ModelShape& shape, const nlohmann::json& settings);

  std::string name() const override { return "dummy"; }
  at::Tensor attend(int layer, const at::Tensor& q, const at::Tensor& k, const at::Tensor& v,
                    const StepInfo& step) override;
  void commit(int layer, const at::Tensor& k, const at::Tensor& v, const StepInfo& step) override;
  PolicyStats stats() const override;
  void reset() override;
  void configure(const nlohmann::json& settings) override;
  nlohmann::json settings() const override;
  // Warm-up needs frame 0 of every head, which the cast dropped, so re-classifying restarts the
  // cache from the next block (as reset()). A forced cast is kept: then this does nothing.
  void reclassify() override;

 private:
  struct Layer {
    int64_t committed = 0;  // blocks committed since the last reset
    bool cast = false;
    // Warm-up stores, every head: frame 0, and a ring of context_blocks block slots
    // (slot = committed % context_blocks; key order does not change attention).
    at::Tensor sink_k, sink_v;    // [B, H, N_f, D]
    at::Tensor local_k, local_v;  // [B, H, ctx·T, D]
    bool has_masses = false;
    std::vector<double> p_first, p_mid;  // [H], from the classifying pass
    // Cast stores. The packed group is the Sink heads, then the Dummy heads; each store has a
    // scratch tail where attend() places the current block, so one call sees [store ; current].
    std::vector<HeadType> types;  // [H]
    int64_t num_sink = 0, num_dummy = 0, num_neighbour = 0;
    at::Tensor packed_heads;  // [Hs + Hd] head indices (sink heads, then dummy)
    at::Tensor sink_heads, dummy_heads, neighbour_heads;
    at::Tensor packed_k, packed_v;        // [B, Hs + Hd, N_f + T, D]
    at::Tensor neighbour_k, neighbour_v;  // [B, Hn, (ctx + 1)·T, D]
  };

  void check_inputs(int layer, const at::Tensor& q, const at::Tensor& k, const at::Tensor& v) const;
  at::Tensor attend_warmup(int layer, const at::Tensor& q, const at::Tensor& k, const at::Tensor& v,
                           const StepInfo& step);
  at::Tensor attend_cast(Layer& state, const at::Tensor& q, const at::Tensor& k,
                         const at::Tensor& v);
  void commit_warmup(Layer& state, const at::Tensor& k, const at::Tensor& v);
  void commit_cast(Layer& state, const at::Tensor& k, const at::Tensor& v);
  // Casts every layer once all have measured masses and committed the same number of blocks.
  void maybe_program_heads();
  // Moves one layer from its warm-up stores (or from nothing) into the cast stores.
  void cast_layer(Layer& state, const std::vector<HeadType>& types);

  ModelShape shape_;
  DummySettings settings_;
  std::vector<Layer> layers_;
  std::vector<float> p0_, p1_;  // [L·H] normalised masses of the last classification
};

std::unique_ptr<AttentionPolicy> make_dummy_policy(const ModelShape& shape,
                                                   const nlohmann::json& settings);

}  // namespace wc::attention
