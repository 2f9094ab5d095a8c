// The `dummy` policy on CUDA in bf16 against its CPU float32 run on the same (bf16-rounded)
// inputs, the planted-head cast on the GPU, and the bench's CUDA event timer.
#include <ATen/ATen.h>
#include <gtest/gtest.h>
#include <torch/cuda.h>

#include <random>

#include "bench/attention_bench.h"
#include "bench/bench_timer.h"
#include "engine/attention/registry.h"
#include "tests/attention/dummy_test_util.h"

namespace wc::attention {
namespace {

using testing::Plant;
using testing::planted_block;
using testing::relative_error;

constexpr const char* kNoCuda =
    "no CUDA device in this build or on this machine (CPU-only LibTorch)";

ModelShape gpu_shape(at::Device device, at::ScalarType dtype) {
  ModelShape shape;
  shape.num_layers = 2;
  shape.num_heads = 6;
  shape.head_dim = 64;
  shape.geometry = BlockGeometry{3, 6, 8};
  shape.device = device;
  shape.dtype = dtype;
  return shape;
}

StepInfo step_of(int64_t block, bool clean, const BlockGeometry& geometry) {
  StepInfo step;
  step.block_index = block;
  step.clean_pass = clean;
  step.noise_level = clean ? 0.0 : 1.0;
  step.denoise_step = clean ? 1 : 0;
  step.geometry = geometry;
  return step;
}

TEST(DummyGpu, Bf16MatchesCpuFloat32OnEveryPass) {
  if (!torch::cuda::is_available()) GTEST_SKIP() << kNoCuda;
  const uint64_t seed = std::random_device{}();
  SCOPED_TRACE("seed " + std::to_string(seed));
  at::manual_seed(seed);
  // A forced cast, so both runs take the same paths even where bf16 would flip a close mass
  // comparison; the online cast is checked with planted heads below.
  const nlohmann::json settings = {{"cast", {{"mix", {2, 2, 2}}}}, {"context_blocks", 2}};
  const ModelShape gpu = gpu_shape(at::Device(at::kCUDA, 0), at::kBFloat16);
  const ModelShape cpu = gpu_shape(at::kCPU, at::kFloat);
  auto on_gpu = create_policy("dummy", gpu, settings);
  auto on_cpu = create_policy("dummy", cpu, settings);
  const std::vector<int64_t> dims = {1, 6, cpu.geometry.tokens_per_block(), 64};
  for (int64_t block = 0; block < 4; ++block) {
    for (bool clean : {false, true}) {
      for (int l = 0; l < 2; ++l) {
        // Round the inputs to bf16 first, so the only difference left is the arithmetic.
        const at::Tensor q = at::randn(dims).to(at::kBFloat16);
        const at::Tensor k = at::randn(dims).to(at::kBFloat16);
        const at::Tensor v = at::randn(dims).to(at::kBFloat16);
        const StepInfo step = step_of(block, clean, cpu.geometry);
        const at::Tensor got = on_gpu->attend(l, q.cuda(), k.cuda(), v.cuda(), step);
        const at::Tensor expected =
            on_cpu->attend(l, q.to(at::kFloat), k.to(at::kFloat), v.to(at::kFloat), step);
        EXPECT_TRUE(got.is_cuda());
        EXPECT_EQ(got.scalar_type(), at::kBFloat16);
        EXPECT_LT(relative_error(got, expected), 2e-2)
            << "block " << block << " layer " << l << (clean ? " clean" : " noisy");
        if (clean) {
          on_gpu->commit(l, k.cuda(), v.cuda(), step);
          on_cpu->commit(l, k.to(at::kFloat), v.to(at::kFloat), step);
        }
      }
    }
  }
  EXPECT_EQ(on_gpu->stats().total_bytes() * 2, on_cpu->stats().total_bytes());  // bf16 vs f32
}

TEST(DummyGpu, PlantedHeadsAreCastOnTheGpu) {
  if (!torch::cuda::is_available()) GTEST_SKIP() << kNoCuda;
  const uint64_t seed = std::random_device{}();
  SCOPED_TRACE("seed " + std::to_string(seed));
  at::manual_seed(seed);
  const ModelShape shape = gpu_shape(at::Device(at::kCUDA, 0), at::kBFloat16);
  const ModelShape cpu_shape = gpu_shape(at::kCPU, at::kFloat);
  const std::vector<std::vector<Plant>> plants = {
      {Plant::kFrameZero, Plant::kCurrent, Plant::kNeighbour, Plant::kCurrent, Plant::kFrameZero,
       Plant::kNeighbour},
      {Plant::kNeighbour, Plant::kFrameZero, Plant::kCurrent, Plant::kNeighbour, Plant::kCurrent,
       Plant::kFrameZero}};
  auto policy = create_policy("dummy", shape, {{"num_dummy", 4}});
  std::vector<std::vector<at::Tensor>> directions(2);
  for (auto& layer : directions) {
    for (int h = 0; h < 6; ++h) {
      const at::Tensor u = at::randn({64});
      layer.push_back(u / u.norm());
    }
  }
  for (int64_t block = 0; block < 2; ++block) {
    for (int l = 0; l < 2; ++l) {
      at::Tensor q, k, v;
      planted_block(block, plants[static_cast<size_t>(l)], cpu_shape,
                    directions[static_cast<size_t>(l)], q, k, v);
      const at::Tensor qg = q.to(shape.device, shape.dtype);
      const at::Tensor kg = k.to(shape.device, shape.dtype);
      const at::Tensor vg = v.to(shape.device, shape.dtype);
      policy->attend(l, qg, kg, vg, step_of(block, false, shape.geometry));
      policy->attend(l, qg, kg, vg, step_of(block, true, shape.geometry));
      policy->commit(l, kg, vg, step_of(block, true, shape.geometry));
    }
  }
  const PolicyStats stats = policy->stats();
  ASSERT_TRUE(stats.classified);
  for (size_t l = 0; l < 2; ++l) {
    for (size_t h = 0; h < 6; ++h) {
      const HeadType expected = plants[l][h] == Plant::kFrameZero   ? HeadType::kSink
                                : plants[l][h] == Plant::kNeighbour ? HeadType::kNeighbour
                                                                    : HeadType::kDummy;
      EXPECT_EQ(stats.heads[l][h].type, expected) << "layer " << l << " head " << h;
    }
  }
}

#ifdef WORLDCAST_HAS_CUDA
TEST(BenchGpu, CudaEventTimerTimesPaths) {
  if (!torch::cuda::is_available()) GTEST_SKIP() << kNoCuda;
  auto timer = make_bench_timer(at::Device(at::kCUDA, 0));
  const at::Tensor a = at::randn({2048, 2048}, at::TensorOptions().device(at::kCUDA));
  for (int call = 0; call < 3; ++call) {  // events are reused across calls
    timer->start_call();
    timer->begin("matmul");
    at::Tensor b = at::matmul(a, a);
    timer->end("matmul");
    timer->begin("add");
    b.add_(1.0);
    timer->end("add");
    timer->stop_call();
    const CallTiming timing = timer->finish_call();
    EXPECT_GT(timing.paths_ms.at("matmul"), 0.0);
    EXPECT_GT(timing.paths_ms.at("add"), 0.0);
    EXPECT_GE(timing.total_ms, timing.paths_ms.at("matmul"));
  }
}

TEST(BenchGpu, TinyCudaRunReportsFiniteRatios) {
  if (!torch::cuda::is_available()) GTEST_SKIP() << kNoCuda;
  AttentionBenchOptions options;
  options.resolution = "8x6";
  options.device = at::Device(at::kCUDA, 0);
  options.dtype = at::kBFloat16;
  options.iters = 3;
  options.warmup = 1;
  const nlohmann::json json = run_attention_bench(options).to_json();
  for (const auto& policy : json["policies"]) {
    SCOPED_TRACE(policy["name"].get<std::string>());
    for (const char* field : {"total_ms", "speedup", "flop_ideal_speedup", "tflops_per_s"}) {
      ASSERT_TRUE(policy[field].is_number()) << field;
      const double value = policy[field].get<double>();
      EXPECT_TRUE(std::isfinite(value) && value > 0.0) << field << " = " << value;
    }
  }
}
#endif

}  // namespace
}  // namespace wc::attention
