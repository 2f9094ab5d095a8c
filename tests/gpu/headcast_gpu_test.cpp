// The dense and headcast policies on CUDA in bf16 (fused SDPA): the same equivalences as the CPU
// tests with bf16 tolerances, and CPU-float32 vs CUDA-bf16 agreement of outputs and scores.
#include <ATen/CPUGeneratorImpl.h>
#include <gtest/gtest.h>
#include <torch/cuda.h>

#include "engine/attention/headcast/headcast_policy.h"
#include "engine/attention/registry.h"
#include "tests/attention/attention_reference.h"

namespace wc::attention {
namespace {

using testing::fresh_seed;
using testing::Qkv;

constexpr const char* kNoCuda = "no CUDA device in this build or on this machine";
// bf16 keeps 8 mantissa bits: inputs are rounded to bf16 before the float32 reference sees them,
// so what remains is the kernel's bf16 arithmetic and the bf16 output.
constexpr double kBf16Tolerance = 3e-2;

ModelShape cuda_shape() {
  ModelShape shape;
  shape.num_layers = 2;
  shape.num_heads = 8;
  shape.head_dim = 64;
  shape.batch = 2;
  shape.geometry = BlockGeometry{2, 6, 10};
  shape.device = at::Device(at::kCUDA, 0);
  shape.dtype = at::kBFloat16;
  return shape;
}

// Random inputs rounded to bf16, as float32 on the CPU (the reference's view of them).
Qkv rounded_qkv(const ModelShape& shape, at::Generator& gen) {
  Qkv x = testing::random_qkv(shape, gen);
  for (at::Tensor* t : {&x.q, &x.k, &x.v}) *t = t->to(at::kBFloat16).to(at::kFloat);
  return x;
}

Qkv on_device(const Qkv& x, const ModelShape& shape) {
  const auto options = at::TensorOptions().dtype(shape.dtype).device(shape.device);
  return Qkv{x.q.to(options), x.k.to(options), x.v.to(options)};
}

constexpr int64_t kWindow = 6;

void expect_cast_matches_reference(const nlohmann::json& cast, const char* cell_mode,
                                   int (*cell_of)(int, int), uint64_t seed) {
  const ModelShape shape = cuda_shape();
  auto policy =
      create_policy("headcast", shape,
                    {{"window", kWindow}, {"cell", 4}, {"cell_mode", cell_mode}, {"cast", cast}});
  auto& headcast = dynamic_cast<HeadCastPolicy&>(*policy);
  const int frames = shape.geometry.frames;
  at::Generator gen = at::detail::createCPUGenerator(seed);
  std::vector<std::vector<Qkv>> history(static_cast<size_t>(shape.num_layers));
  for (int64_t block = 0; block < 6; ++block) {
    const StepInfo info = testing::step_info(shape, block, 0, 0, true);
    for (int layer = 0; layer < shape.num_layers; ++layer) {
      const auto types = headcast.cast(layer);
      testing::Visibility vis;
      for (int h = 0; h < shape.num_heads; ++h) {
        const HeadType type = types[static_cast<size_t>(h)];
        std::set<int64_t> held;
        if (block > 0 && type == HeadType::kSink) held = testing::block_frames(0, frames);
        if (block > 0 && type == HeadType::kDummy) held = testing::block_frames(block - 1, frames);
        if (type == HeadType::kGlobal || type == HeadType::kSpatial) {
          held = testing::window_frames(block * frames, frames, kWindow);
        }
        vis.held.push_back(held);
      }
      vis.cell_of = [types, cell_of](int h, int y, int x) {
        return types[static_cast<size_t>(h)] == HeadType::kSpatial ? cell_of(y, x) : -1;
      };
      const Qkv in = rounded_qkv(shape, gen);
      const Qkv dev = on_device(in, shape);
      const at::Tensor out = policy->attend(layer, dev.q, dev.k, dev.v, info);
      EXPECT_EQ(out.scalar_type(), at::kBFloat16);
      EXPECT_TRUE(out.is_cuda());
      const at::Tensor expected =
          testing::masked_reference(shape, history[static_cast<size_t>(layer)], in, block, vis);
      ASSERT_LT(testing::max_abs_diff(out, expected), kBf16Tolerance)
          << "block " << block << " layer " << layer << " cells " << cell_mode;
      policy->commit(layer, dev.k, dev.v, info);
      history[static_cast<size_t>(layer)].push_back(in);
    }
  }
}

const nlohmann::json kInterleaved = {
    {"layers",
     {{"sink", "dummy", "spatial", "global", "spatial", "sink", "global", "dummy"},
      {"P", "G", "P", "S", "D", "P", "G", "P"}}}};

TEST(HeadCastCuda, EachTypeMatchesItsMaskDivisorCells) {
  if (!torch::cuda::is_available()) GTEST_SKIP() << kNoCuda;
  const uint64_t seed = fresh_seed();
  SCOPED_TRACE(testing::seed_trace(seed));
  expect_cast_matches_reference(
      kInterleaved, "divisor", [](int y, int x) { return (y / 3) * 2 + x / 5; }, seed);
}

TEST(HeadCastCuda, EachTypeMatchesItsMaskRaggedCells) {
  if (!torch::cuda::is_available()) GTEST_SKIP() << kNoCuda;
  const uint64_t seed = fresh_seed();
  SCOPED_TRACE(testing::seed_trace(seed));
  expect_cast_matches_reference(
      kInterleaved, "ragged", [](int y, int x) { return (y / 4) * 3 + x / 4; }, seed);
  expect_cast_matches_reference(
      {{"mix", {2, 2, 2, 2}}}, "ragged", [](int y, int x) { return (y / 4) * 3 + x / 4; },
      seed + 1);
}

TEST(HeadCastCuda, DenseAndEveryHeadGlobalMatchTheReference) {
  if (!torch::cuda::is_available()) GTEST_SKIP() << kNoCuda;
  const uint64_t seed = fresh_seed();
  SCOPED_TRACE(testing::seed_trace(seed));
  const ModelShape shape = cuda_shape();
  auto dense = create_policy("dense", shape, {{"window", kWindow}});
  auto global =
      create_policy("headcast", shape, {{"window", kWindow}, {"cast", {{"mix", {0, 0, 0, 8}}}}});
  at::Generator gen = at::detail::createCPUGenerator(seed);
  std::vector<Qkv> history;
  for (int64_t block = 0; block < 6; ++block) {
    const StepInfo info = testing::step_info(shape, block, 0, 0, true);
    testing::Visibility vis;
    vis.held.assign(8, testing::window_frames(block * 2, 2, kWindow));
    const Qkv in = rounded_qkv(shape, gen);
    const Qkv dev = on_device(in, shape);
    const at::Tensor want = testing::masked_reference(shape, history, in, block, vis);
    const at::Tensor from_dense = dense->attend(0, dev.q, dev.k, dev.v, info);
    const at::Tensor from_global = global->attend(0, dev.q, dev.k, dev.v, info);
    ASSERT_LT(testing::max_abs_diff(from_dense, want), kBf16Tolerance) << "block " << block;
    ASSERT_LT(testing::max_abs_diff(from_global, from_dense), 1e-2) << "block " << block;
    dense->commit(0, dev.k, dev.v, info);
    global->commit(0, dev.k, dev.v, info);
    history.push_back(in);
  }
}

TEST(HeadCastCuda, CpuFloatAgreesWithCudaBf16) {
  if (!torch::cuda::is_available()) GTEST_SKIP() << kNoCuda;
  const uint64_t seed = fresh_seed();
  SCOPED_TRACE(testing::seed_trace(seed));
  const ModelShape cuda = cuda_shape();
  ModelShape cpu = cuda;
  cpu.device = at::kCPU;
  cpu.dtype = at::kFloat;
  // Online classification at block 3 with every query row, then the cast's paths.
  const nlohmann::json settings = {{"window", kWindow}, {"cell", 4}, {"query_sample", 0}};
  auto on_cpu = create_policy("headcast", cpu, settings);
  auto on_cuda = create_policy("headcast", cuda, settings);
  at::Generator gen = at::detail::createCPUGenerator(seed);
  for (int64_t block = 0; block < 6; ++block) {
    for (int step = 0; step <= 1; ++step) {
      const StepInfo info = testing::step_info(cuda, block, step, 1, step == 1);
      for (int layer = 0; layer < cuda.num_layers; ++layer) {
        const Qkv in = rounded_qkv(cuda, gen);
        const Qkv dev = on_device(in, cuda);
        const at::Tensor a = on_cpu->attend(layer, in.q, in.k, in.v, info);
        const at::Tensor b = on_cuda->attend(layer, dev.q, dev.k, dev.v, info);
        ASSERT_LT(testing::max_abs_diff(a, b), kBf16Tolerance) << "block " << block;
        if (info.clean_pass) {
          on_cpu->commit(layer, in.k, in.v, info);
          on_cuda->commit(layer, dev.k, dev.v, info);
        }
      }
    }
    // Force the CUDA policy onto the CPU's cast so their paths stay comparable after block 3
    // (borderline scores may round differently in bf16).
    if (block == 3) {
      const PolicyStats cpu_stats = on_cpu->stats();
      const PolicyStats cuda_stats = on_cuda->stats();
      ASSERT_TRUE(cpu_stats.classified);
      ASSERT_TRUE(cuda_stats.classified);
      nlohmann::json layers = nlohmann::json::array();
      for (size_t l = 0; l < cpu_stats.heads.size(); ++l) {
        nlohmann::json heads = nlohmann::json::array();
        for (size_t h = 0; h < cpu_stats.heads[l].size(); ++h) {
          const HeadScores& x = cpu_stats.heads[l][h].scores;
          const HeadScores& y = cuda_stats.heads[l][h].scores;
          EXPECT_NEAR(x.sink, y.sink, 2e-2);
          EXPECT_NEAR(x.dummy, y.dummy, 2e-2);
          EXPECT_NEAR(x.spatial_mean, y.spatial_mean, 2e-2);
          EXPECT_NEAR(x.spatial_score, y.spatial_score, 1e-1);
          heads.push_back(head_type_name(cpu_stats.heads[l][h].type));
        }
        layers.push_back(heads);
      }
      on_cpu->configure({{"cast", {{"layers", layers}}}});
      on_cuda->configure({{"cast", {{"layers", layers}}}});
    }
  }
}

}  // namespace
}  // namespace wc::attention
