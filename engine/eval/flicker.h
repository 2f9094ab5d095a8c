// Block-boundary flicker (DESIGN.md §13): mean absolute frame-to-frame difference at AR block
// boundaries over that inside blocks, or, at one frame per block (every pair straddles a
// boundary), a policy's boundary difference over the dense run's for the same seeds and actions.
#pragma once

#include <ATen/ATen.h>

#include <cstdint>
#include <optional>
#include <vector>

namespace wc::eval {

// Sums of per-pair mean absolute RGB differences (0..255), split by whether the pair straddles
// a block boundary. Accumulates over several sequences (seeds).
struct FrameDifferences {
  double boundary_sum = 0.0;
  int64_t boundary_pairs = 0;
  double inside_sum = 0.0;
  int64_t inside_pairs = 0;

  // `frames[i]` has frame index first_index + i; frame t starts a block when t % F == 0, so the
  // pair (t − 1, t) straddles a boundary then. Index 0 is the first generated frame.
  void add_sequence(const std::vector<at::Tensor>& frames, int frames_per_block,
                    int64_t first_index = 0);
  void add(const FrameDifferences& other);

  std::optional<double> boundary_mean() const;
  std::optional<double> inside_mean() const;
};

// boundary_mean / inside_mean; nullopt without pairs of both kinds (one frame per block).
std::optional<double> block_flicker(const FrameDifferences& differences);

// A policy's boundary_mean over the reference (dense) run's: 1 = as much frame-to-frame change
// as dense, above 1 = more. nullopt when either has no boundary pairs or dense has none.
std::optional<double> flicker_vs_reference(const FrameDifferences& policy,
                                           const FrameDifferences& reference);

}  // namespace wc::eval
