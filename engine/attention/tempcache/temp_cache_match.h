// TempCache's correspondence search, vectorised over every row (batch x head [x cell]) and token:
// each new key's nearest cached entry among previous frames, first the co-located entry, then the
// newest entries of its random-projection (LSH) bucket. See Note [TempCache matching].
#pragma once

#include <ATen/ATen.h>

#include <cstdint>

namespace wc::attention {

// Note [TempCache matching]
// A new key k at position p of frame f is compared (cosine, float32) with
//  1. the co-located entry: the entry that the token at p of the previous committed frame went to
//     (merged into or appended as), if it still exists; its representative is that token's key,
//     so this is "same row, same column, previous frame" even after merges;
//  2. if that fails τ: the `candidates` newest entries (largest insertion order `seq`, see Note
//     [TempCache slots]) whose bucket equals k's bucket, the bucket being the sign bits of k·P for
//     `bits` seeded random projections P per row. Entries are sorted by (bucket, seq) once per
//     frame, each key finds its bucket's range with searchsorted and gathers the candidates just
//     below the range's end: no loop over tokens, no per-bucket table to keep in step with
//     evictions, and no value read back to the host.
// The best candidate merges if its cosine ≥ τ (τ ≥ 1 never merges: cosine 1 is only reachable by
// parallel keys and rounding makes it unreliable). Keys of one frame are not matched with each
// other, only with entries of earlier frames. If several keys of a frame pick the same entry only
// one merges (the newest, i.e. largest token index); the others are appended, so each entry takes
// at most one key per frame and every merge is exactly the running-mean update.
inline constexpr int64_t kNoEntry = -1;

// Bucket codes of keys [R, N, D] under projections [R, D, bits] -> [R, N] int64 (0 when bits = 0).
at::Tensor lsh_codes(const at::Tensor& keys, const at::Tensor& projections);

// Seeded projections [rows, head_dim, bits] float32 on `device` (identical on every device).
at::Tensor lsh_projections(int64_t rows, int64_t head_dim, int bits, uint64_t seed,
                           const at::Device& device);

struct MatchInputs {
  at::Tensor entry_keys;      // [R, >= C, >= D] representative keys (the first D dims are used)
  at::Tensor entry_codes;     // [R, >= C] int64 bucket codes
  at::Tensor entry_valid;     // [R, >= C] bool: the slot holds an entry
  at::Tensor entry_seq;       // [R, >= C] int64 insertion order (< 2^46)
  at::Tensor entry_inv_norm;  // [R, >= C] float32 1/|key|, or undefined (computed here)
  int64_t capacity = 0;       // C: slots searched
  at::Tensor colocated;       // [R, N] int64 entry of the previous frame's token, or -1
  at::Tensor new_keys;        // [R, N, D]
  at::Tensor new_codes;       // [R, N] int64
  double tau = 0.9;
  int bits = 0;  // 0: co-located only
  int candidates = 4;
};

// [R, N] int64: the entry each new key merges into, or kNoEntry to append (before the
// one-key-per-entry rule, which apply_frame enforces).
at::Tensor match_keys(const MatchInputs& in);

}  // namespace wc::attention
