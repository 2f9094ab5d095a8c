// The fused inference kernels (fused_ops.h) against ops.h's float32 composition on fresh random
// inputs, in float32, bfloat16 and float16, at game-small's and Wan 2.1-1.3B's widths.
#include <gtest/gtest.h>
#include <torch/cuda.h>

#include <c10/core/GradMode.h>

#include "engine/model/fused_ops.h"
#include "engine/model/ops.h"

namespace wc::model {
namespace {

#define REQUIRE_CUDA()                                                                     \
  if (!torch::cuda::is_available()) {                                                      \
    GTEST_SKIP() << "no CUDA device in this build or on this machine (CPU-only LibTorch)"; \
  }

// The largest difference relative to the reference's largest magnitude.
double scaled_max_error(const at::Tensor& got, const at::Tensor& expected) {
  const at::Tensor g = got.to(at::kCPU, at::kFloat), e = expected.to(at::kCPU, at::kFloat);
  return ((g - e).abs().max() / e.abs().max()).item<double>();
}

// One rounding to the dtype costs up to half an ulp of the largest value; a few are allowed.
double tolerance(at::ScalarType type) {
  switch (type) {
    case at::kBFloat16:
      return 1.6e-2;
    case at::kHalf:
      return 2e-3;
    default:
      return 2e-6;
  }
}

struct Width {
  int heads;
  int head_dim;
};
const Width kWidths[] = {{4, 64}, {12, 128}};  // game-small, Wan 2.1-1.3B
const at::ScalarType kTypes[] = {at::kFloat, at::kBFloat16, at::kHalf};

TEST(FusedOpsGpu, LayerNormModulateMatchesComposition) {
  REQUIRE_CUDA();
  c10::NoGradGuard no_grad;
  at::manual_seed(11);
  for (const Width w : kWidths) {
    for (const at::ScalarType type : kTypes) {
      const int64_t b = 2, frames = 3, tokens = 37, dim = int64_t{w.heads} * w.head_dim;
      // Rows with an offset and a scale, as residual streams have.
      const at::Tensor x = at::randn({b, frames * tokens, dim}) * 3.0 + 0.5;
      const at::Tensor mod = at::randn({b, frames, 6, dim}) * 0.5;  // shift/scale are views
      const at::Tensor shift = mod.select(2, 3), scale = mod.select(2, 4);
      const at::Tensor expected = modulate(layer_norm(x, 1e-6), shift, scale);
      const auto opts = at::TensorOptions().device(at::kCUDA).dtype(type);
      const at::Tensor mod_d = mod.to(opts);
      const at::Tensor got =
          fused_layer_norm_modulate(x.to(opts), mod_d.select(2, 3), mod_d.select(2, 4), 1e-6);
      ASSERT_EQ(got.scalar_type(), type);
      ASSERT_EQ(got.sizes(), x.sizes());
      EXPECT_LT(scaled_max_error(got, expected), tolerance(type)) << dim << " " << type;
    }
  }
}

TEST(FusedOpsGpu, QkNormRopeMatchesComposition) {
  REQUIRE_CUDA();
  c10::NoGradGuard no_grad;
  at::manual_seed(12);
  for (const Width w : kWidths) {
    for (const at::ScalarType type : kTypes) {
      for (const bool batched : {false, true}) {
        const int64_t b = 2, frames = 2, gh = 3, gw = 5, tokens = frames * gh * gw;
        const int64_t dim = int64_t{w.heads} * w.head_dim;
        const at::Tensor y = at::randn({b, tokens, dim}) * 2.0;
        const at::Tensor weight = at::rand({dim}) + 0.5;
        // Shared tables start at frame 1 000 (large angles); batched ones give each clip its own.
        const RopeTable table =
            batched ? rope_table_at(at::tensor({4.0, 9.0, 1000.0, 3.0}, at::kDouble).view({2, 2}),
                                    gh, gw, w.head_dim, 10000.0)
                    : rope_table(1000, frames, gh, gw, w.head_dim, 10000.0);
        const at::Tensor split =
            rms_norm(y, weight, 1e-6).view({b, tokens, w.heads, w.head_dim}).transpose(1, 2);
        const at::Tensor expected = apply_rope(split, table);
        const auto opts = at::TensorOptions().device(at::kCUDA).dtype(type);
        const RopeRotation rotation = rope_rotation(table, at::kCUDA, type);
        const at::Tensor got =
            fused_qk_norm_rope(y.to(opts), weight.to(opts), rotation, w.heads, 1e-6);
        ASSERT_EQ(got.sizes(), at::IntArrayRef({b, w.heads, tokens, w.head_dim}));
        EXPECT_TRUE(got.is_contiguous());
        EXPECT_LT(scaled_max_error(got, expected), tolerance(type))
            << dim << " " << type << (batched ? " batched" : " shared");
      }
    }
  }
}

TEST(FusedOpsGpu, LinearGeluMatchesComposition) {
  REQUIRE_CUDA();
  c10::NoGradGuard no_grad;
  at::manual_seed(13);
  for (const at::ScalarType type : kTypes) {
    for (const int64_t in : {256, 1536}) {
      const at::Tensor x = at::randn({2, 75, in});
      const at::Tensor weight = at::randn({3 * in, in}) / std::sqrt(double(in));
      const at::Tensor bias = at::randn({3 * in}) * 0.1;
      const at::Tensor expected = at::gelu(at::linear(x, weight, bias), "tanh");
      const auto opts = at::TensorOptions().device(at::kCUDA).dtype(type);
      const at::Tensor got = fused_linear_gelu(x.to(opts), weight.to(opts), bias.to(opts));
      ASSERT_EQ(got.sizes(), expected.sizes());
      // The product's inputs are rounded to the dtype first: allow for the accumulation.
      const double allowed = type == at::kFloat ? 1e-3 : 4.0 * tolerance(type);
      EXPECT_LT(scaled_max_error(got, expected), allowed) << in << " " << type;
    }
  }
}

TEST(FusedOpsGpu, AutogradKeepsTheComposition) {
  REQUIRE_CUDA();
  const at::Tensor y = at::randn({1, 6, 128}, at::kCUDA).requires_grad_();
  const at::Tensor weight = at::ones({128}, at::kCUDA);
  const RopeRotation rotation =
      rope_rotation(rope_table(0, 1, 2, 3, 64, 10000.0), at::kCUDA, at::kFloat);
  EXPECT_FALSE(fused_kernels_apply(y));
  // The dispatching form falls back to the differentiable composition while autograd records.
  const at::Tensor out = qk_norm_rope(y, weight, rotation, 2, 1e-6);
  EXPECT_TRUE(out.requires_grad());
  out.sum().backward();
  EXPECT_TRUE(y.grad().defined());
  c10::NoGradGuard no_grad;
  EXPECT_TRUE(fused_kernels_apply(y));
}

TEST(FusedOpsGpu, DispatchUsesTheKernelsOnCudaWithoutGrad) {
  REQUIRE_CUDA();
  c10::NoGradGuard no_grad;
  at::manual_seed(14);
  const at::Tensor x = at::randn({1, 2 * 10, 256}, at::kCUDA);
  const at::Tensor shift = at::randn({1, 2, 256}, at::kCUDA),
                   scale = at::randn({1, 2, 256}, at::kCUDA);
  EXPECT_TRUE(at::equal(layer_norm_modulate(x, shift, scale, 1e-6),
                        fused_layer_norm_modulate(x, shift, scale, 1e-6)));
}

}  // namespace
}  // namespace wc::model
