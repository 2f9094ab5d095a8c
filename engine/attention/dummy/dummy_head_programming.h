// Dummy Forcing's online head classification: attention mass per key segment from sampled query
// rows, and "dynamic head programming", which turns those masses into a Sink/Dummy/Neighbour cast.
#pragma once

#include <ATen/ATen.h>

#include <cstdint>
#include <vector>

#include "engine/attention/headcast/head_type.h"

namespace wc::attention {

// Mean attention mass, per head, on the key segments [0, first_end) (the sink frame) and
// [first_end, mid_end) (the neighbour frames); the remaining keys are the current block.
struct SegmentMasses {
  std::vector<double> first;  // [H]
  std::vector<double> mid;    // [H]
};

// `count` query rows drawn uniformly with replacement from [0, num_queries), seeded by (seed,
// layer) so that each layer's sample is independent of the order in which layers are visited.
std::vector<int64_t> sample_query_rows(int64_t num_queries, int64_t count, uint64_t seed,
                                       int layer);

// Exact softmax rows (scale 1/sqrt(D), float32) of q[:, :, rows] against all `keys`, summed per
// segment and averaged over the sampled rows and the batch. q: [B, H, Tq, D]; keys: [B, H, Tk, D].
SegmentMasses attention_segment_masses(const at::Tensor& q, const at::Tensor& keys,
                                       const std::vector<int64_t>& rows, int64_t first_end,
                                       int64_t mid_end);

// The cast of all layer-heads (flattened layer-major: index l * H + h).
struct DummyCast {
  std::vector<HeadType> types;  // kSink, kDummy or kNeighbour
  std::vector<float> p_first;   // P0 = p_first / sum over all layer-heads of p_first
  std::vector<float> p_mid;     // P1 = p_mid / sum over all layer-heads of p_mid
};

// Normalises each mass across all layer-heads (a zero sum gives zeros), makes the `num_dummy`
// heads with the smallest max(P0, P1) Dummy (ties: lower index first), and every other head Sink
// if P0 >= P1, else Neighbour. Greedy is exact: it maximises the kept mass sum over non-Dummy
// heads of max(P0, P1) under exactly `num_dummy` Dummy heads.
DummyCast program_dummy_heads(const std::vector<double>& p_first, const std::vector<double>& p_mid,
                              int num_dummy);

}  // namespace wc::attention
