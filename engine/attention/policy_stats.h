// A policy's observable state: per-head casts and scores, and cache sizes per head type. The panel,
// the benchmarks and the plugin all read this immutable snapshot.
#pragma once

#include <array>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "engine/attention/headcast/head_type.h"

namespace wc::attention {

struct HeadStats {
  HeadType type = HeadType::kDense;
  HeadScores scores;
};

struct TypeStats {
  int heads = 0;              // heads of this type over all layers
  int64_t cached_tokens = 0;  // key/value entries held, summed over those heads (per batch item)
  int64_t cached_bytes = 0;   // bytes of K and V held for them
  // TempCache bookkeeping (zero for policies that do not merge).
  int64_t merges = 0;
  int64_t evictions = 0;
  double mean_group_size = 0.0;
};

// AnnSA's attention (Note [AnnSA tiles] in bucket_attention.h) since the last reset; zero for
// policies without it. Pairs are (query, history key) pairs over every layer, head and pass.
struct AnnStats {
  double history_pairs = 0.0;   // pairs dense attention over the same history would score
  double allowed_pairs = 0.0;   // pairs the buckets allowed
  double gathered_pairs = 0.0;  // pairs the block-sparse calls scored (allowed + padding)
  double largest_bucket = 0.0;  // the largest share of a head's history one bucket held

  // The share of the history's pairs attended (1 = dense).
  double kept_share() const { return history_pairs > 0.0 ? allowed_pairs / history_pairs : 1.0; }
};

struct PolicyStats {
  std::string policy;
  bool classified = false;  // the one-time cast has happened (or was forced)
  int64_t blocks_committed = 0;
  std::vector<std::vector<HeadStats>> heads;  // [layer][head]
  std::array<TypeStats, kHeadTypeCount> per_type{};
  // Note [Re-cast agreement]
  // The HeadCast paper reports how stable its one-shot cast is (casts measured at other steps,
  // seeds or prompts agree on 80-90 % of heads). Live, Re-classify measures the same on the
  // running world: once the new cast is decided, the share of heads cast as they were before it.
  // NaN until a re-classification has been decided (and after a reset).
  double recast_agreement = std::numeric_limits<double>::quiet_NaN();
  AnnStats ann;

  // Each head's type, [layer][head].
  std::vector<std::vector<HeadType>> cast() const {
    std::vector<std::vector<HeadType>> types;
    for (const auto& layer : heads) {
      types.emplace_back();
      for (const HeadStats& head : layer) types.back().push_back(head.type);
    }
    return types;
  }
  int64_t total_tokens() const {
    int64_t sum = 0;
    for (const auto& type : per_type) sum += type.cached_tokens;
    return sum;
  }
  int64_t total_bytes() const {
    int64_t sum = 0;
    for (const auto& type : per_type) sum += type.cached_bytes;
    return sum;
  }
};

}  // namespace wc::attention
