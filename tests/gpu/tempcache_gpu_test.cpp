// TempCache on CUDA in bf16: the log-count lemma against float64 dense attention over the
// uncompressed history, the extra-dimension bias path (fused SDPA) and the mask path against
// the float64 reference, and attend + commit of tempcache and combined under CUDA's sync debug
// mode (any synchronising call throws). Skipped with a reason where no CUDA device is present.
#include <ATen/CPUGeneratorImpl.h>
#include <gtest/gtest.h>

#ifdef WORLDCAST_HAS_CUDA
#include <c10/cuda/CUDAFunctions.h>
#endif

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "engine/attention/biased_attention.h"
#include "engine/attention/registry.h"
#include "engine/attention/sdpa.h"
#include "tests/attention/attention_reference.h"
#include "tests/attention/tempcache_reference.h"

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

TEST(TempCacheGpu, ExtraDimBiasPathMatchesTheReference) {
  if (!at::hasCUDA()) GTEST_SKIP() << kNoCuda;
  const uint64_t seed = fresh_seed();
  SCOPED_TRACE(seed_trace(seed));
  at::Generator gen = at::make_generator<at::CPUGeneratorImpl>(seed);
  const int64_t d = 128, dp = padded_head_dim(d), tk = 3000, pad = 200;
  const auto f32 = at::TensorOptions().dtype(at::kFloat);
  const at::Tensor q = at::randn({1, 12, 600, d}, gen, f32);
  at::Tensor keys = at::zeros({1, 12, tk, dp}, f32);
  at::Tensor values = at::zeros({1, 12, tk, dp}, f32);
  keys.narrow(3, 0, d).copy_(at::randn({1, 12, tk, d}, gen, f32));
  values.narrow(3, 0, d).copy_(at::randn({1, 12, tk, d}, gen, f32));
  at::Tensor bias = (at::rand({1, 12, tk}, gen, f32) * 1000).add(1).log();
  bias.narrow(2, 1000, pad).fill_(kPadBias);
  keys.narrow(2, 1000, pad).zero_();
  values.narrow(2, 1000, pad).zero_();
  // bf16 inputs, float64 truth on the rounded inputs without the padding slots.
  const at::Tensor qb = q.to(at::kBFloat16), kb = keys.to(at::kBFloat16),
                   vb = values.to(at::kBFloat16);
  const at::Tensor keep = at::cat({at::arange(1000), at::arange(1000 + pad, tk)});
  const at::Tensor truth = reference_attention(
      qb.to(at::kDouble), kb.narrow(3, 0, d).index_select(2, keep).to(at::kDouble),
      vb.narrow(3, 0, d).index_select(2, keep).to(at::kDouble), std::nullopt,
      bias.index_select(2, keep).unsqueeze(2).to(at::kDouble));
  const at::Device cuda(at::kCUDA, 0);
  at::Tensor kc = kb.to(cuda);
  write_bias_dims(kc, bias.to(cuda), d);
  for (BiasPath path : {BiasPath::kExtraDim, BiasPath::kMask}) {
    at::Tensor out = biased_attention(qb.to(cuda), kc, vb.to(cuda), bias.to(cuda), path);
    ASSERT_TRUE(out.is_cuda());
    ASSERT_FALSE(out.isnan().any().item<bool>());
    EXPECT_LT(relative_error(out, truth), 1e-2) << bias_path_name(path);
  }
}

TEST(TempCacheGpu, IdenticalKeysWithLogCountEqualDenseAttention) {
  if (!at::hasCUDA()) GTEST_SKIP() << kNoCuda;
  const uint64_t seed = fresh_seed();
  SCOPED_TRACE(seed_trace(seed));
  at::Generator gen = at::make_generator<at::CPUGeneratorImpl>(seed);
  ModelShape shape;
  shape.num_heads = 4;
  shape.head_dim = 64;
  shape.batch = 2;
  shape.geometry = BlockGeometry{3, 6, 10};
  shape.device = at::Device(at::kCUDA, 0);
  shape.dtype = at::kBFloat16;
  auto policy = create_policy("tempcache", shape, {{"tau", 0.95}, {"lsh_bits", 6}});
  const int64_t n = shape.geometry.tokens_per_frame();
  const auto f32 = at::TensorOptions().dtype(at::kFloat);
  std::vector<at::Tensor> ks, vs;
  at::Tensor prev = at::randn({2, 4, n, 64}, gen, f32).to(at::kBFloat16);
  for (int64_t block = 0; block < 8; ++block) {
    std::vector<at::Tensor> frames;
    for (int f = 0; f < 3; ++f) {
      const at::Tensor fresh = at::randn({2, 4, n, 64}, gen, f32).to(at::kBFloat16);
      prev = at::where(at::rand({2, 4, n, 1}, gen, f32).lt(0.8), prev, fresh);
      frames.push_back(prev);
    }
    const at::Tensor k = at::cat(frames, 2);
    const at::Tensor v = at::randn({2, 4, 3 * n, 64}, gen, f32).to(at::kBFloat16);
    const at::Tensor q = at::randn({2, 4, 3 * n, 64}, gen, f32).to(at::kBFloat16);
    ks.push_back(k);
    vs.push_back(v);
    const at::Tensor out = testing::run_block(*policy, shape, block, q.to(shape.device),
                                              k.to(shape.device), v.to(shape.device));
    const at::Tensor truth = reference_attention(q.to(at::kDouble), at::cat(ks, 2).to(at::kDouble),
                                                 at::cat(vs, 2).to(at::kDouble));
    EXPECT_LT(relative_error(out, truth), 1.5e-2) << "block " << block;
  }
  EXPECT_GT(policy->stats().per_type[0].merges, 0);
}

#ifdef WORLDCAST_HAS_CUDA
// Turns every synchronising CUDA call (.item(), nonzero, D2H copies, ...) into an exception while
// alive; see Note [TempCache slots].
class SyncsAreErrors {
 public:
  SyncsAreErrors() {
    c10::cuda::warning_state().set_sync_debug_mode(c10::cuda::SyncDebugMode::L_ERROR);
  }
  ~SyncsAreErrors() {
    c10::cuda::warning_state().set_sync_debug_mode(c10::cuda::SyncDebugMode::L_DISABLED);
  }
};
#endif

TEST(TempCacheGpu, AttendAndCommitNeverSynchronise) {
#ifndef WORLDCAST_HAS_CUDA
  GTEST_SKIP() << "built without WORLDCAST_CUDA";
#else
  if (!at::hasCUDA()) GTEST_SKIP() << kNoCuda;
  const uint64_t seed = fresh_seed();
  SCOPED_TRACE(seed_trace(seed));
  at::Generator gen = at::make_generator<at::CPUGeneratorImpl>(seed);
  ModelShape shape;
  shape.num_layers = 2;
  shape.num_heads = 8;
  shape.head_dim = 64;
  shape.batch = 1;
  shape.geometry = BlockGeometry{3, 12, 20};
  shape.device = at::Device(at::kCUDA, 0);
  shape.dtype = at::kBFloat16;
  const int64_t n = shape.geometry.tokens_per_frame();
  const int64_t t = shape.geometry.tokens_per_block();
  const std::vector<std::pair<std::string, nlohmann::json> > runs = {
      {"tempcache", {{"budget", 6 * n}}},
      {"tempcache", {{"budget", 6 * n}, {"budget_rule", "merge_closest"}}},
      {"tempcache", {{"window", 9}}},
      {"combined", {{"cast", {{"mix", {2, 2, 2, 2}}}}, {"budget", 6 * n}, {"window", 0}}}};
  const auto f32 = at::TensorOptions().dtype(at::kFloat);
  for (const auto& [name, settings] : runs) {
    SCOPED_TRACE(name + " " + settings.dump());
    auto policy = create_policy(name, shape, settings);
    at::Tensor prev = at::randn({1, 8, n, 64}, gen, f32);
    for (int64_t block = 0; block < 8; ++block) {
      std::vector<at::Tensor> frames;
      for (int f = 0; f < 3; ++f) {
        prev = at::where(at::rand({1, 8, n, 1}, gen, f32).lt(0.7), prev,
                         at::randn({1, 8, n, 64}, gen, f32));
        frames.push_back(prev);
      }
      const at::Tensor k = at::cat(frames, 2).to(shape.device, at::kBFloat16);
      const at::Tensor q = at::randn({1, 8, t, 64}, gen, f32).to(shape.device, at::kBFloat16);
      const at::Tensor v = at::randn({1, 8, t, 64}, gen, f32).to(shape.device, at::kBFloat16);
      StepInfo step;
      step.block_index = block;
      step.clean_pass = true;
      step.geometry = shape.geometry;
      // Block 0 allocates and may pick kernels; every later block must not synchronise.
      try {
        std::optional<SyncsAreErrors> guard;
        if (block > 0) guard.emplace();
        for (int l = 0; l < shape.num_layers; ++l) policy->attend(l, q, k, v, step);
        for (int l = 0; l < shape.num_layers; ++l) policy->commit(l, k, v, step);
      } catch (const std::exception& error) {
        FAIL() << "block " << block << " synchronised: " << error.what();
      }
    }
    EXPECT_GT(policy->stats().total_tokens(), 0);
  }
#endif
}

}  // namespace
}  // namespace wc::attention
