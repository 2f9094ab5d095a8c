// Note [Spatial proxy]: classification's "cells" proxy measures exactly the deployed Spatial path
// (a query's own cell in every slot), checked against a mask built independently from
// CellGrid::cell_of on fresh random inputs; and it tells apart a head whose locality the cells
// keep from one whose locality straddles them, which the paper's neighbourhood proxy cannot.
#include <ATen/CPUGeneratorImpl.h>
#include <gtest/gtest.h>

#include <cmath>

#include "engine/attention/headcast/classify_heads.h"
#include "engine/attention/sdpa.h"
#include "tests/attention/attention_reference.h"

namespace wc::attention {
namespace {

using testing::fresh_seed;

constexpr int kGrid = 12;
constexpr int kSlots = 4;  // three history frames and the current one (one frame per block)
constexpr int kHeadDim = 8;

ClassifyInputs random_inputs(at::Generator& gen, int heads) {
  ClassifyInputs in;
  in.geometry = BlockGeometry{1, kGrid, kGrid};
  const int64_t tokens = kGrid * kGrid;
  const auto options = at::TensorOptions().dtype(at::kFloat);
  in.q = at::randn({1, heads, tokens, kHeadDim}, gen, options);
  in.k = at::randn({1, heads, kSlots * tokens, kHeadDim}, gen, options);
  in.v = at::randn({1, heads, kSlots * tokens, kHeadDim}, gen, options);
  in.slot_frames = {0, 1, 2, 3};
  in.block = 3;
  return in;
}

// The spatial agreement of one head computed from scratch: the own-cell mask from cell_of.
struct Expected {
  double mean = 0, error = 0;
};
Expected expected_cells(const ClassifyInputs& in, int head, const CellGrid& cells) {
  const int64_t tokens = kGrid * kGrid;
  at::Tensor mask = at::zeros({tokens, kSlots * tokens}, at::TensorOptions().dtype(at::kBool));
  auto m = mask.accessor<bool, 2>();
  for (int64_t qi = 0; qi < tokens; ++qi) {
    const int cq = cells.cell_of(static_cast<int>(qi / kGrid), static_cast<int>(qi % kGrid));
    for (int64_t kj = 0; kj < kSlots * tokens; ++kj) {
      const int64_t pos = kj % tokens;
      m[qi][kj] = cells.cell_of(static_cast<int>(pos / kGrid), static_cast<int>(pos % kGrid)) == cq;
    }
  }
  const at::Tensor q = in.q.narrow(1, head, 1), k = in.k.narrow(1, head, 1),
                   v = in.v.narrow(1, head, 1);
  const at::Tensor full = reference_attention(q, k, v);
  const at::Tensor restricted = reference_attention(q, k, v, mask);
  Expected e;
  e.mean = at::cosine_similarity(full, restricted, -1).mean().item<double>();
  e.error = ((full - restricted).pow(2).sum() / full.pow(2).sum()).item<double>();
  return e;
}

std::vector<int64_t> all_rows() {
  return sample_query_rows(kGrid * kGrid, 0, 0);
}

TEST(SpatialProxy, CellsProxyMatchesAnIndependentOwnCellMask) {
  const uint64_t seed = fresh_seed();
  SCOPED_TRACE(testing::seed_trace(seed));
  at::Generator gen = at::detail::createCPUGenerator(seed);
  const ClassifyInputs in = random_inputs(gen, 3);
  for (auto [cell, mode] : {std::pair{4, CellMode::kDivisor}, std::pair{5, CellMode::kRagged}}) {
    const CellGrid cells = CellGrid::make(in.geometry, cell, mode);
    const auto evidence = classify_heads(in, all_rows(), SpatialProxy{2, &cells});
    ASSERT_EQ(evidence.size(), 3u);
    for (int h = 0; h < 3; ++h) {
      const Expected e = expected_cells(in, h, cells);
      EXPECT_NEAR(evidence[static_cast<size_t>(h)].spatial_mean, e.mean, 1e-5) << "cell " << cell;
      EXPECT_NEAR(evidence[static_cast<size_t>(h)].spatial_error, e.error, 1e-5) << "cell " << cell;
    }
  }
}

// One head whose logits fall with the squared token distance (a smooth local receptive field):
// every query's attention straddles the boundaries of 4x4 cells, so the deployed path drops part
// of it, while a radius-2 neighbourhood keeps nearly all of it.
TEST(SpatialProxy, CellsProxySeesLocalityThatStraddlesTheCells) {
  const uint64_t seed = fresh_seed();
  SCOPED_TRACE(testing::seed_trace(seed));
  at::Generator gen = at::detail::createCPUGenerator(seed);
  ClassifyInputs in = random_inputs(gen, 1);
  const int64_t tokens = kGrid * kGrid;
  const double beta = 0.5;
  const double scale = std::sqrt(static_cast<double>(kHeadDim));
  in.q.zero_();
  in.k.zero_();
  for (int64_t t = 0; t < kSlots * tokens; ++t) {
    const double y = static_cast<double>((t % tokens) / kGrid);
    const double x = static_cast<double>(t % kGrid);
    auto k = in.k[0][0][t];
    k[0] = y;
    k[1] = x;
    k[2] = 1.0;
    k[3] = y * y + x * x;
    if (t >= tokens) continue;
    auto q = in.q[0][0][t];
    q[0] = scale * 2 * beta * y;
    q[1] = scale * 2 * beta * x;
    q[2] = -scale * beta * (y * y + x * x);
    q[3] = -scale * beta;
  }
  const CellGrid cells = CellGrid::make(in.geometry, 4, CellMode::kDivisor);
  const HeadEvidence neighbourhood = classify_heads(in, all_rows(), SpatialProxy{2, nullptr})[0];
  const HeadEvidence own_cell = classify_heads(in, all_rows(), SpatialProxy{2, &cells})[0];
  const Expected deployed = expected_cells(in, 0, cells);
  EXPECT_NEAR(own_cell.spatial_error, deployed.error, 1e-5);
  // The neighbourhood proxy calls the head Spatial at the paper's thresholds; the cells proxy
  // reports the larger error the deployed path really makes, and does not.
  const CastThresholds paper;
  EXPECT_EQ(cast_head(neighbourhood, paper), HeadType::kSpatial)
      << "M_sp " << neighbourhood.spatial_mean << " P5 " << neighbourhood.spatial_p5 << " e "
      << neighbourhood.spatial_error;
  EXPECT_GT(own_cell.spatial_error, 2 * neighbourhood.spatial_error);
  EXPECT_EQ(cast_head(own_cell, paper), HeadType::kGlobal)
      << "M_sp " << own_cell.spatial_mean << " P5 " << own_cell.spatial_p5 << " e "
      << own_cell.spatial_error;
}

}  // namespace
}  // namespace wc::attention
