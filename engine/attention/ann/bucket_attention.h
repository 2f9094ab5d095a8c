// AnnSA's attention (FAST-AR, DESIGN.md §6): each query attends to the history keys of its own
// and nearby LSH buckets and to every key of the current block, run block-sparse. See Note
// [AnnSA tiles].
#pragma once

#include <ATen/ATen.h>

#include <cstdint>

namespace wc::attention {

// Note [AnnSA tiles]
// AnnSA lets a query attend only to the history keys whose bucket (the sign bits of seeded random
// projections, lsh_codes in temp_cache_match.h, the same projections for queries and keys) lies
// within Hamming distance `radius` of its own, plus every key of the current block: queries and
// keys that point the same way land in the same bucket, and a query's attention mass lies on the
// keys that point its way. Per query that is a ragged gather; as a block-sparse kernel it is
// tiles. Each row's queries are sorted by bucket (stably) and cut into tiles of `tile` queries; a
// tile's probe set is the union of its queries' Hamming balls, and every query of the tile attends
// to the history keys whose bucket is in that set. Sorting makes a tile span one or two buckets,
// so the union is barely wider than each query's own ball, and the rule stays exact to state:
// bucket_mask() writes it out as the [R, Tq, N] mask the reference applies.
// The history keys are sorted by bucket and cut into blocks of `block` keys; a tile gathers the
// blocks that hold any key of its probe set (every tile as many as the neediest tile needs, the
// others pointing at an empty block) and masks, key by key, the gathered keys outside its probe
// set, so its softmax runs over exactly the keys the rule allows. Stacked on the batch, all tiles
// of all rows are one attention call, as HeadCast's Spatial path stacks cells. The current block
// is attended densely in a second call and the two halves merge by their log-sum-exps, as flash
// attention merges key blocks: the current block's keys are never copied once per tile.
// Cost: the history's pairs fall to about the probe share of them (radius 1 over b bits probes
// b + 1 of 2^b buckets) plus what the padding of blocks and tiles adds; the price is one host
// read per call (the neediest tile's block count, which fixes the gathered shape), so the path
// is not replayed from a CUDA graph.

struct BucketAttentionInputs {
  at::Tensor q;             // [R, Tq, D]
  at::Tensor q_codes;       // [R, Tq] int64 buckets in [0, 2^bits)
  at::Tensor keys;          // [R, N, D] history (N may be 0)
  at::Tensor values;        // [R, N, D]
  at::Tensor key_codes;     // [R, N] int64 buckets; −1 marks an empty slot, never attended
  at::Tensor key_bias;      // [R, N] float32 additive logit bias (TempCache's log n), or undefined
  at::Tensor current_keys;  // [R, T, D], attended by every query
  at::Tensor current_values;  // [R, T, D]
  int bits = 6;
  int radius = 1;
  int64_t tile = 128;  // queries per tile
  int64_t block = 64;  // history keys per block
};

// What calls attended, summed on the device (no host read per call): float64 scalars that a
// call adds to when they are defined. Pairs are (query, history key) pairs summed over rows.
struct BucketAttentionCounts {
  at::Tensor history_pairs;   // pairs dense attention would score (non-empty slots)
  at::Tensor allowed_pairs;   // pairs the rule allows
  at::Tensor gathered_pairs;  // pairs the block-sparse call scored (allowed + padding)
  at::Tensor largest_bucket;  // the largest share of a row's history keys one bucket holds (max)

  // Fresh zero counters on `device`.
  static BucketAttentionCounts zeros(const at::Device& device);
};

// [2^bits, 2^bits] bool on `device`: whether two buckets lie within Hamming distance `radius`.
at::Tensor hamming_ball(int bits, int radius, const at::Device& device);

// The rule of Note [AnnSA tiles] written out: [R, Tq, N] bool, true where query i may attend to
// history key j. Computed by plain loops over tiles on the CPU (the tests' reference).
at::Tensor bucket_mask(const BucketAttentionInputs& in);

// Float32 reference: dense attention over history + current block with bucket_mask() applied to
// the history and key_bias added. Returns [R, Tq, D] in q's dtype.
at::Tensor bucket_attention_reference(const BucketAttentionInputs& in);

// The block-sparse path of Note [AnnSA tiles]; the same function as the reference up to
// summation order. `counts`, if given, is added to.
at::Tensor bucket_attention(const BucketAttentionInputs& in,
                            BucketAttentionCounts* counts = nullptr);

// softmax(q kᵀ/√D + bias) v and its row log-sum-exp: q [R, Tq, D], k / v [R, Tk, D], bias
// [R, 1, Tk] float32 or undefined. Returns the output in q's dtype and the log-sum-exp [R, Tq]
// in float32. The memory-efficient fused kernel on CUDA (LibTorch >= 2), float32 elsewhere.
struct AttentionWithLse {
  at::Tensor out, lse;
};
AttentionWithLse attention_with_lse(const at::Tensor& q, const at::Tensor& k, const at::Tensor& v,
                                    const at::Tensor& bias);

}  // namespace wc::attention
