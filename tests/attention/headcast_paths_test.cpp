// Each HeadCast attention path against the naive reference with the mask its type implies: every
// head Global == dense; Sink+Dummy, Global and Spatial (divisor and ragged cells) in one cast.
#include <ATen/CPUGeneratorImpl.h>
#include <gtest/gtest.h>

#include "engine/attention/headcast/cast_flops.h"
#include "engine/attention/headcast/headcast_policy.h"
#include "engine/attention/registry.h"
#include "tests/attention/attention_reference.h"

namespace wc::attention {
namespace {

using testing::fresh_seed;
using testing::Qkv;

ModelShape path_shape() {
  ModelShape shape;
  shape.num_layers = 2;
  shape.num_heads = 8;
  shape.head_dim = 8;
  shape.batch = 2;
  shape.geometry = BlockGeometry{2, 6, 10};
  return shape;
}

constexpr int64_t kWindow = 6;  // sink block (2 frames) + 4 rolling frames

TEST(HeadCastPaths, EveryHeadGlobalEqualsDense) {
  const uint64_t seed = fresh_seed();
  SCOPED_TRACE(testing::seed_trace(seed));
  const ModelShape shape = path_shape();
  auto dense = create_policy("dense", shape, {{"window", kWindow}});
  auto headcast =
      create_policy("headcast", shape, {{"window", kWindow}, {"cast", {{"mix", {0, 0, 0, 8}}}}});
  at::Generator gen = at::detail::createCPUGenerator(seed);
  for (int64_t block = 0; block < 6; ++block) {
    for (int step = 0; step <= 2; ++step) {
      const StepInfo info = testing::step_info(shape, block, step, 2, step == 2);
      for (int layer = 0; layer < shape.num_layers; ++layer) {
        const Qkv in = testing::random_qkv(shape, gen);
        const at::Tensor want = dense->attend(layer, in.q, in.k, in.v, info);
        const at::Tensor got = headcast->attend(layer, in.q, in.k, in.v, info);
        ASSERT_LT(testing::max_abs_diff(got, want), 1e-5) << "block " << block;
        if (info.clean_pass) {
          dense->commit(layer, in.k, in.v, info);
          headcast->commit(layer, in.k, in.v, info);
        }
      }
    }
  }
  EXPECT_EQ(headcast->stats().total_tokens(), dense->stats().total_tokens());
}

struct CellCase {
  const char* mode;
  int cell;
  // The expected cell of (y, x), written out by hand for the 6x10 grid.
  int (*cell_of)(int y, int x);
};

// A settings change applied between blocks `at` - 1 and `at`.
struct LayoutChange {
  int64_t at = -1;
  int64_t window = 0;
  const CellCase* cells = nullptr;
};

// Runs a rollout with `cast` and checks every output against the reference with what each head's
// type may see (and the held frames against that model).

void expect_paths_match(const nlohmann::json& cast, const CellCase& first_cells, uint64_t seed,
                        const LayoutChange& change = {}) {
  const CellCase* cells_now = &first_cells;
  int64_t window = kWindow;
  const CellCase& cells = first_cells;
  // What a window head holds: every committed frame its window kept, filtered again when the
  // window changes (a grown window refills, it cannot bring evicted frames back).
  std::set<int64_t> window_held;
  auto apply_window = [&](int64_t committed) {
    const auto keep = testing::window_frames(committed, 2, window);
    for (auto it = window_held.begin(); it != window_held.end();) {
      it = keep.count(*it) ? std::next(it) : window_held.erase(it);
    }
  };
  const ModelShape shape = path_shape();
  auto policy = create_policy(
      "headcast", shape,
      {{"window", window}, {"cell", cells.cell}, {"cell_mode", cells.mode}, {"cast", cast}});
  auto& headcast = dynamic_cast<HeadCastPolicy&>(*policy);
  const int frames = shape.geometry.frames;
  at::Generator gen = at::detail::createCPUGenerator(seed);
  std::vector<std::vector<Qkv>> history(static_cast<size_t>(shape.num_layers));
  for (int64_t block = 0; block < 6; ++block) {
    if (block == change.at) {
      policy->configure({{"window", change.window},
                         {"cell", change.cells->cell},
                         {"cell_mode", change.cells->mode}});
      window = change.window;
      cells_now = change.cells;
      apply_window(block * frames);
    }
    for (int step = 0; step <= 1; ++step) {
      const StepInfo info = testing::step_info(shape, block, step, 1, step == 1);
      for (int layer = 0; layer < shape.num_layers; ++layer) {
        const auto& types = headcast.cast(layer);
        testing::Visibility vis;
        for (int h = 0; h < shape.num_heads; ++h) {
          const HeadType type = types[static_cast<size_t>(h)];
          std::set<int64_t> held;
          if (block > 0 && type == HeadType::kSink) held = testing::block_frames(0, frames);
          if (block > 0 && type == HeadType::kDummy)
            held = testing::block_frames(block - 1, frames);
          if (type == HeadType::kGlobal || type == HeadType::kSpatial) {
            held = window_held;
          }
          vis.held.push_back(held);
          const auto actual = headcast.held_frames(layer, h);
          ASSERT_EQ(std::set<int64_t>(actual.begin(), actual.end()), held)
              << "layer " << layer << " head " << h << " block " << block;
        }
        vis.cell_of = [&types, cells_now](int h, int y, int x) {
          return types[static_cast<size_t>(h)] == HeadType::kSpatial ? cells_now->cell_of(y, x)
                                                                     : -1;
        };
        const Qkv in = testing::random_qkv(shape, gen);
        const at::Tensor out = policy->attend(layer, in.q, in.k, in.v, info);
        const at::Tensor expected =
            testing::masked_reference(shape, history[static_cast<size_t>(layer)], in, block, vis);
        ASSERT_LT(testing::max_abs_diff(out, expected), 1e-5)
            << "block " << block << " layer " << layer << " cells " << cells_now->mode;
        if (info.clean_pass) {
          policy->commit(layer, in.k, in.v, info);
          history[static_cast<size_t>(layer)].push_back(in);
        }
      }
    }
    for (int f = 0; f < frames; ++f) window_held.insert(block * frames + f);
    apply_window((block + 1) * frames);
  }
}

// 6x10 grid, cell 4: divisor mode takes 3 (of 1, 2, 3, 6) x 5 (of 1, 2, 5, 10) cells.
const CellCase kDivisor{"divisor", 4, [](int y, int x) { return (y / 3) * 2 + x / 5; }};
// Ragged: rows 4 + 2, columns 4 + 4 + 2: four cell shapes.
const CellCase kRagged{"ragged", 4, [](int y, int x) { return (y / 4) * 3 + x / 4; }};

const nlohmann::json kInterleaved = {
    {"layers",
     {{"sink", "dummy", "spatial", "global", "spatial", "sink", "global", "dummy"},
      {"P", "G", "P", "S", "D", "P", "G", "P"}}}};

TEST(HeadCastPaths, EachTypeMatchesItsMaskDivisorCells) {
  const uint64_t seed = fresh_seed();
  SCOPED_TRACE(testing::seed_trace(seed));
  expect_paths_match(kInterleaved, kDivisor, seed);
}

TEST(HeadCastPaths, EachTypeMatchesItsMaskRaggedCells) {
  const uint64_t seed = fresh_seed();
  SCOPED_TRACE(testing::seed_trace(seed));
  expect_paths_match(kInterleaved, kRagged, seed);
}

TEST(HeadCastPaths, SeededMixMatchesItsMask) {
  const uint64_t seed = fresh_seed();
  SCOPED_TRACE(testing::seed_trace(seed));
  expect_paths_match({{"mix", {2, 2, 2, 2}}}, kRagged, seed);
}

// Rounded cell 4 on 6x10: 2 rows of 3 (6 / 4 rounds to 2), 3 columns of 4, 3 and 3.
const CellCase kRounded{"rounded", 4,
                        [](int y, int x) { return x < 4 ? y / 3 : 2 + (y / 3) * 2 + (x - 4) / 3; }};

TEST(HeadCastPaths, EachTypeMatchesItsMaskRoundedCells) {
  const uint64_t seed = fresh_seed();
  SCOPED_TRACE(testing::seed_trace(seed));
  expect_paths_match(kInterleaved, kRounded, seed);
}

// Ragged cell 3 on 6x10: rows 3 + 3, columns 3 + 3 + 3 + 1.
const CellCase kRaggedThree{"ragged", 3, [](int y, int x) { return (y / 3) * 4 + x / 3; }};

TEST(HeadCastPaths, WindowAndCellChangesRefileTheStores) {
  const uint64_t seed = fresh_seed();
  SCOPED_TRACE(testing::seed_trace(seed));
  // Shrink the window (sink + 2 rolling frames) and re-cut the Spatial cells after block 3.
  expect_paths_match(kInterleaved, kDivisor, seed, LayoutChange{3, 4, &kRaggedThree});
  // Grow it again (heads keep what they hold and refill).
  expect_paths_match(kInterleaved, kRaggedThree, seed + 1, LayoutChange{4, 8, &kDivisor});
}

TEST(HeadCastPaths, StoreSizesMatchTheFormulas) {
  const uint64_t seed = fresh_seed();
  SCOPED_TRACE(testing::seed_trace(seed));
  const ModelShape shape = path_shape();
  auto policy =
      create_policy("headcast", shape, {{"window", kWindow}, {"cast", {{"mix", {1, 3, 2, 2}}}}});
  at::Generator gen = at::detail::createCPUGenerator(seed);
  const int64_t frame_tokens = shape.geometry.tokens_per_frame();
  const int64_t block_tokens = shape.geometry.tokens_per_block();
  const int64_t bytes_per_token = 2 * shape.batch * shape.head_dim * 4;
  for (int64_t block = 0; block < 5; ++block) {
    const StepInfo info = testing::step_info(shape, block, 0, 0, true);
    for (int layer = 0; layer < shape.num_layers; ++layer) {
      const Qkv in = testing::random_qkv(shape, gen);
      policy->attend(layer, in.q, in.k, in.v, info);
      policy->commit(layer, in.k, in.v, info);
    }
    const PolicyStats stats = policy->stats();
    const int64_t window_tokens =
        std::min<int64_t>((block + 1) * shape.geometry.frames, kWindow) * frame_tokens;
    const int64_t layers = shape.num_layers;
    const std::vector<std::pair<HeadType, int64_t>> expected = {
        {HeadType::kSink, layers * 1 * block_tokens},
        {HeadType::kDummy, layers * 3 * block_tokens},
        {HeadType::kSpatial, layers * 2 * window_tokens},
        {HeadType::kGlobal, layers * 2 * window_tokens}};
    for (const auto& [type, tokens] : expected) {
      const TypeStats& t = stats.per_type[static_cast<size_t>(type)];
      EXPECT_EQ(t.cached_tokens, tokens) << head_type_name(type) << " block " << block;
      EXPECT_EQ(t.cached_bytes, tokens * bytes_per_token) << head_type_name(type);
    }
    EXPECT_EQ(stats.per_type[static_cast<size_t>(HeadType::kSink)].heads, 2);
    EXPECT_EQ(stats.per_type[static_cast<size_t>(HeadType::kDummy)].heads, 6);
    EXPECT_TRUE(stats.classified);
    EXPECT_EQ(stats.blocks_committed, block + 1);
  }
}

TEST(SpatialCells, CellShapesAtBenchmarkResolutions) {
  // 720P latent grid 45x80: divisors nearest 10 are 9 (of 1, 3, 5, 9, 15, 45) and 10.
  const BlockGeometry p720{3, 45, 80};
  const CellGrid divisor720 = CellGrid::make(p720, 10, CellMode::kDivisor);
  ASSERT_EQ(divisor720.groups().size(), 1u);
  EXPECT_EQ(divisor720.groups()[0].cell_h, 9);
  EXPECT_EQ(divisor720.groups()[0].cell_w, 10);
  EXPECT_EQ(divisor720.groups()[0].cells(), 40);
  // 1080P 68x120: 4 (of 1, 2, 4, 17, 34, 68; 4 and 17 are 6 and 7 away) and 10.
  const CellGrid divisor1080 = CellGrid::make(BlockGeometry{3, 68, 120}, 10, CellMode::kDivisor);
  EXPECT_EQ(divisor1080.groups()[0].cell_h, 4);
  EXPECT_EQ(divisor1080.groups()[0].cell_w, 10);
  // Ties go to the larger divisor: 8 has 2 and 4 at distance 1 from 3.
  EXPECT_EQ(nearest_divisor(8, 3), 4);
  // Ragged 45x80 with 10x10 cells: 4 full rows of cells and a 5-row edge.
  const CellGrid ragged720 = CellGrid::make(p720, 10, CellMode::kRagged);
  ASSERT_EQ(ragged720.groups().size(), 2u);
  EXPECT_EQ(ragged720.groups()[0].cells() + ragged720.groups()[1].cells(), 40);
  EXPECT_EQ(ragged720.groups()[1].cell_h, 5);
  EXPECT_EQ(ragged720.cell_of(44, 79), 39);
  // Rounded (the paper's, Note [Paper defaults]): round(n / 10) cells an axis, the remainder
  // spread one token at a time over the first cells. 720P: 5 x 8 cells of 9 x 10.
  const CellGrid rounded720 = CellGrid::make(p720, 10, CellMode::kRounded);
  ASSERT_EQ(rounded720.groups().size(), 1u);
  EXPECT_EQ(rounded720.groups()[0].cell_h, 9);
  EXPECT_EQ(rounded720.groups()[0].cells(), 40);
  // 1080P 68x120: 7 rows of cells (5 of 10, 2 of 9) by 12 of 10, no cell of 4.
  const CellGrid rounded1080 = CellGrid::make(BlockGeometry{3, 68, 120}, 10, CellMode::kRounded);
  ASSERT_EQ(rounded1080.groups().size(), 2u);
  EXPECT_EQ(rounded1080.groups()[0].cell_rows, 5);
  EXPECT_EQ(rounded1080.groups()[0].cell_h, 10);
  EXPECT_EQ(rounded1080.groups()[1].row0, 50);
  EXPECT_EQ(rounded1080.groups()[1].cell_rows, 2);
  EXPECT_EQ(rounded1080.groups()[1].cell_h, 9);
  EXPECT_EQ(rounded1080.groups()[1].cell_w, 10);
  EXPECT_EQ(rounded1080.groups()[0].cells() + rounded1080.groups()[1].cells(), 84);
  // 480P 30x52: 3 x 5 cells, two columns of 11 then three of 10.
  const CellGrid rounded480 = CellGrid::make(BlockGeometry{3, 30, 52}, 10, CellMode::kRounded);
  ASSERT_EQ(rounded480.groups().size(), 2u);
  EXPECT_EQ(rounded480.groups()[0].cell_w, 11);
  EXPECT_EQ(rounded480.groups()[0].cell_cols, 2);
  EXPECT_EQ(rounded480.groups()[1].cell_w, 10);
  EXPECT_EQ(rounded480.groups()[1].cell_cols, 3);
  // Every token in exactly one cell, cells numbered densely: each of the grids above.
  for (const CellGrid* grid : {&rounded720, &rounded1080, &rounded480}) {
    int cells = 0;
    for (const CellGroup& g : grid->groups()) cells += g.cells();
    std::vector<int> count(static_cast<size_t>(cells), 0);
    for (int y = 0; y < grid->grid_h(); ++y) {
      for (int x = 0; x < grid->grid_w(); ++x) {
        const int c = grid->cell_of(y, x);
        ASSERT_GE(c, 0);
        ASSERT_LT(c, cells);
        ++count[static_cast<size_t>(c)];
      }
    }
    for (int n : count) EXPECT_GE(n, 81);  // no cell under 9 x 9
  }
  // A grid smaller than half a cell is one cell.
  EXPECT_EQ(CellGrid::make(BlockGeometry{1, 4, 4}, 10, CellMode::kRounded).groups()[0].cells(), 1);
}

TEST(CastFlops, MatchTheClosedForms) {
  const BlockGeometry g{3, 45, 80};
  const CellGrid cells = CellGrid::make(g, 10, CellMode::kDivisor);
  const double queries = 3 * 3600.0;
  const double global = head_attention_flops(HeadType::kGlobal, g, 128, 21, cells);
  EXPECT_DOUBLE_EQ(global, 4.0 * queries * 24 * 3600 * 128);
  EXPECT_DOUBLE_EQ(head_attention_flops(HeadType::kDense, g, 128, 21, cells), global);
  EXPECT_DOUBLE_EQ(head_attention_flops(HeadType::kSpatial, g, 128, 21, cells),
                   global * 90.0 / 3600.0);
  EXPECT_DOUBLE_EQ(head_attention_flops(HeadType::kSink, g, 128, 21, cells),
                   4.0 * queries * 6 * 3600 * 128);
  const std::vector<HeadType> cast = {HeadType::kSink, HeadType::kDummy, HeadType::kGlobal};
  EXPECT_DOUBLE_EQ(layer_attention_flops(cast, g, 128, 21, cells),
                   global + 2 * 4.0 * queries * 6 * 3600 * 128);
}

}  // namespace
}  // namespace wc::attention
