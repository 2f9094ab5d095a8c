// AnnSA and AnnCA on CUDA in bf16 (Note [AnnSA tiles], Note [AnnCA]): AnnSA's block-sparse path
// (the memory-efficient kernel with its log-sum-exp) against the float64 masked reference on the
// same rounded inputs, at a Wan-like head size and a history of thousands of keys, with a
// TempCache bias and empty slots; the annsa / fast-ar policies over a short rollout against the
// same policies on the CPU; AnnCA's gathered path against its masked reference and, keeping every
// token, against dense cross-attention. Skipped with a reason where no CUDA device is present.
#include <ATen/CPUGeneratorImpl.h>
#include <gtest/gtest.h>

#include "engine/attention/ann/bucket_attention.h"
#include "engine/attention/ann/cross_attention_policy.h"
#include "engine/attention/registry.h"
#include "engine/attention/sdpa.h"
#include "engine/attention/tempcache/temp_cache_match.h"
#include "tests/attention/attention_reference.h"

namespace wc::attention {
namespace {

using testing::fresh_seed;
using testing::seed_trace;

constexpr const char* kNoCuda = "no CUDA device in this build or on this machine";

double relative_error(const at::Tensor& out, const at::Tensor& ref) {
  const at::Tensor a = out.to(at::kDouble).cpu();
  const at::Tensor b = ref.to(at::kDouble).cpu();
  return ((a - b).norm() / b.norm()).item<double>();
}

TEST(AnnsaGpu, BlockSparseMatchesTheMaskedReference) {
  if (!at::hasCUDA()) GTEST_SKIP() << kNoCuda;
  const uint64_t seed = fresh_seed();
  SCOPED_TRACE(seed_trace(seed));
  at::Generator gen = at::make_generator<at::CPUGeneratorImpl>(seed);
  const int64_t rows = 6, tq = 700, n = 4000, d = 128;
  const auto f32 = at::TensorOptions().dtype(at::kFloat);
  BucketAttentionInputs in;
  in.q = at::randn({rows, tq, d}, gen, f32).to(at::kBFloat16);
  in.keys = at::randn({rows, n, d}, gen, f32).to(at::kBFloat16);
  in.values = at::randn({rows, n, d}, gen, f32).to(at::kBFloat16);
  in.current_keys = at::randn({rows, tq, d}, gen, f32).to(at::kBFloat16);
  in.current_values = at::randn({rows, tq, d}, gen, f32).to(at::kBFloat16);
  in.key_bias = (at::rand({rows, n}, gen, f32) * 20).add(1).log();
  const at::Tensor projections = lsh_projections(rows, d, 6, 3, at::kCPU);
  in.q_codes = lsh_codes(in.q, projections);
  in.key_codes = at::where(at::rand({rows, n}, gen, f32).lt(0.1), at::full({}, int64_t{-1}),
                           lsh_codes(in.keys, projections));
  // The float64 truth on the CPU, on the bf16-rounded inputs.
  BucketAttentionInputs truth_in = in;
  for (at::Tensor* t : {&truth_in.q, &truth_in.keys, &truth_in.values, &truth_in.current_keys,
                        &truth_in.current_values}) {
    *t = t->to(at::kDouble);
  }
  const at::Tensor truth = bucket_attention_reference(truth_in);
  BucketAttentionInputs gpu = in;
  for (at::Tensor* t : {&gpu.q, &gpu.keys, &gpu.values, &gpu.current_keys, &gpu.current_values,
                        &gpu.key_bias, &gpu.q_codes, &gpu.key_codes}) {
    *t = t->cuda();
  }
  BucketAttentionCounts counts = BucketAttentionCounts::zeros(at::Device(at::kCUDA));
  const at::Tensor out = bucket_attention(gpu, &counts);
  EXPECT_EQ(out.scalar_type(), at::kBFloat16);
  EXPECT_LT(relative_error(out, truth), 1e-2);
  // Random keys of 128 dims spread over the buckets, and a tile of 128 sorted queries spans
  // about a fifth of them: the rule drops part of the history, not most of it.
  EXPECT_LT(counts.allowed_pairs.item<double>(), counts.history_pairs.item<double>());
  EXPECT_GE(counts.gathered_pairs.item<double>(), counts.allowed_pairs.item<double>());
}

TEST(AnnsaGpu, PoliciesMatchTheirCpuRuns) {
  if (!at::hasCUDA()) GTEST_SKIP() << kNoCuda;
  const uint64_t seed = fresh_seed();
  SCOPED_TRACE(seed_trace(seed));
  at::Generator gen = at::make_generator<at::CPUGeneratorImpl>(seed);
  ModelShape cpu;
  cpu.num_layers = 2;
  cpu.num_heads = 4;
  cpu.head_dim = 64;
  cpu.geometry = BlockGeometry{1, 16, 16};
  ModelShape cuda = cpu;
  cuda.device = at::Device(at::kCUDA);
  cuda.dtype = at::kBFloat16;
  for (const char* name : {"annsa", "fast-ar"}) {
    SCOPED_TRACE(name);
    const nlohmann::json settings = {{"ann_bits", 4}, {"ann_radius", 1}, {"ann_tile", 64}};
    auto on_cpu = create_policy(name, cpu, settings);
    auto on_gpu = create_policy(name, cuda, settings);
    for (int block = 0; block < 6; ++block) {
      const StepInfo step = testing::step_info(cpu, block, 0, 1, true);
      // bf16-rounded inputs for both, so the buckets agree.
      const testing::Qkv x = testing::random_qkv(cpu, gen);
      const at::Tensor q = x.q.to(at::kBFloat16), k = x.k.to(at::kBFloat16),
                       v = x.v.to(at::kBFloat16);
      for (int layer = 0; layer < cpu.num_layers; ++layer) {
        const at::Tensor a =
            on_cpu->attend(layer, q.to(at::kFloat), k.to(at::kFloat), v.to(at::kFloat), step);
        const at::Tensor b = on_gpu->attend(layer, q.cuda(), k.cuda(), v.cuda(), step);
        EXPECT_LT(relative_error(b, a), 2e-2) << "block " << block << " layer " << layer;
        on_cpu->commit(layer, k.to(at::kFloat), v.to(at::kFloat), step);
        on_gpu->commit(layer, k.cuda(), v.cuda(), step);
      }
    }
    EXPECT_LT(on_gpu->stats().ann.kept_share(), 1.0);
  }
}

// AnnCA on CUDA (Note [AnnCA]): the gathered path (SDPA with the pad bias) against the float64
// masked reference at 720P-like sizes with a 512-token prompt, and the whole policy against dense
// cross-attention when every token is kept.
TEST(AnnCaGpu, GatheredPathMatchesTheMaskedReference) {
  if (!at::hasCUDA()) GTEST_SKIP() << kNoCuda;
  const uint64_t seed = fresh_seed();
  SCOPED_TRACE(seed_trace(seed));
  at::Generator gen = at::make_generator<at::CPUGeneratorImpl>(seed);
  const int64_t rows = 4, frames = 3, per_frame = 600, prompt = 512, d = 128;
  const auto f32 = at::TensorOptions().dtype(at::kFloat);
  const at::Tensor q = at::randn({rows, frames * per_frame, d}, gen, f32).to(at::kBFloat16);
  const at::Tensor k = at::randn({rows, prompt, d}, gen, f32).to(at::kBFloat16);
  const at::Tensor v = at::randn({rows, prompt, d}, gen, f32).to(at::kBFloat16);
  const std::vector<at::Tensor> tables = {lsh_projections(rows, d, 8, 1, at::kCPU)};
  const at::Tensor keep = annca_keep(q.to(at::kFloat), k.to(at::kFloat), tables, frames, 16);
  const at::Tensor truth =
      kept_cross_attention_reference(q.to(at::kDouble), k.to(at::kDouble), v.to(at::kDouble), keep);
  const at::Tensor out = kept_cross_attention(q.cuda(), k.cuda(), v.cuda(), keep.cuda());
  EXPECT_EQ(out.scalar_type(), at::kBFloat16);
  EXPECT_LT(relative_error(out, truth), 1e-2);
  // The rule on the device is the rule on the CPU.
  std::vector<at::Tensor> device_tables = {tables[0].cuda()};
  EXPECT_TRUE(at::equal(
      annca_keep(q.cuda().to(at::kFloat), k.cuda().to(at::kFloat), device_tables, frames, 16).cpu(),
      keep));

  ModelShape shape;
  shape.num_layers = 1;
  shape.num_heads = rows;
  shape.head_dim = d;
  shape.geometry = BlockGeometry{static_cast<int>(frames), 20, 30};
  shape.device = at::Device(at::kCUDA);
  shape.dtype = at::kBFloat16;
  auto all = create_cross_policy("annca", shape, {{"min_kept", prompt}});
  auto dense = create_cross_policy("dense", shape, nlohmann::json::object());
  StepInfo step;
  step.geometry = shape.geometry;
  const at::Tensor q4 = q.cuda().unsqueeze(0), k4 = k.cuda().unsqueeze(0),
                   v4 = v.cuda().unsqueeze(0);
  EXPECT_LT(relative_error(all->attend(0, q4, k4, v4, step), dense->attend(0, q4, k4, v4, step)),
            1e-2);
}

}  // namespace
}  // namespace wc::attention
