// The DiT's tensor operations against direct formulas (loops, complex numbers, doubles).
#include <gtest/gtest.h>

#include <cmath>
#include <complex>
#include <random>

#include "engine/model/fused_ops.h"
#include "engine/model/ops.h"

namespace wc::model {
namespace {

TEST(Ops, RopeSplitMatchesWan) {
  const RopeSplit wan = rope_split(128);  // 64 pairs: 22 time, 21 row, 21 column
  EXPECT_EQ(wan.time, 22);
  EXPECT_EQ(wan.row, 21);
  EXPECT_EQ(wan.column, 21);
  const RopeSplit small = rope_split(64);
  EXPECT_EQ(small.time + small.row + small.column, 32);
}

TEST(Ops, RopeEqualsComplexRotation) {
  const int frames = 2, gh = 3, gw = 4, d = 12;
  const int64_t frame_start = 1000;  // large absolute positions stay exact
  const double theta = 10000.0;
  at::manual_seed(1);
  const at::Tensor x = at::randn({1, 2, frames * gh * gw, d}, at::kDouble);
  const RopeTable table = rope_table(frame_start, frames, gh, gw, d, theta);
  const at::Tensor rotated = apply_rope(x.to(at::kFloat), table).to(at::kDouble);

  const RopeSplit split = rope_split(d);
  const auto acc = x.accessor<double, 4>();
  const auto out = rotated.accessor<double, 4>();
  for (int h = 0; h < 2; ++h) {
    int token = 0;
    for (int f = 0; f < frames; ++f) {
      for (int y = 0; y < gh; ++y) {
        for (int c = 0; c < gw; ++c, ++token) {
          for (int p = 0; p < d / 2; ++p) {
            double position, freq;
            if (p < split.time) {
              position = static_cast<double>(frame_start + f);
              freq = std::pow(theta, -2.0 * p / (2.0 * split.time));
            } else if (p < split.time + split.row) {
              position = y;
              freq = std::pow(theta, -2.0 * (p - split.time) / (2.0 * split.row));
            } else {
              position = c;
              freq = std::pow(theta, -2.0 * (p - split.time - split.row) / (2.0 * split.column));
            }
            const std::complex<double> z(acc[0][h][token][2 * p], acc[0][h][token][2 * p + 1]);
            const std::complex<double> expected = z * std::polar(1.0, position * freq);
            EXPECT_NEAR(out[0][h][token][2 * p], expected.real(), 1e-5);
            EXPECT_NEAR(out[0][h][token][2 * p + 1], expected.imag(), 1e-5);
          }
        }
      }
    }
  }
}

TEST(Ops, RopePreservesNormsAndRelativePositions) {
  // q·k after RoPE depends only on the offset between the two frames.
  at::manual_seed(2);
  const at::Tensor q = at::randn({1, 1, 1, 16});
  const at::Tensor k = at::randn({1, 1, 1, 16});
  const auto dot = [&](int64_t fq, int64_t fk) {
    const at::Tensor rq = apply_rope(q, rope_table(fq, 1, 1, 1, 16, 10000.0));
    const at::Tensor rk = apply_rope(k, rope_table(fk, 1, 1, 1, 16, 10000.0));
    return (rq * rk).sum().item<double>();
  };
  EXPECT_NEAR(dot(5, 3), dot(105, 103), 1e-4);
  const at::Tensor rq = apply_rope(q, rope_table(7, 1, 1, 1, 16, 10000.0));
  EXPECT_NEAR(rq.norm().item<double>(), q.norm().item<double>(), 1e-5);
}

// The model's fast form against the straightforward one: bit-identical in float32 and bfloat16,
// for a plain table and a batched one (training clips), on fresh random inputs and a
// transposed (non-contiguous) input as the attention layer passes it.
TEST(Ops, RopeRotationIsBitIdenticalToApplyRope) {
  at::manual_seed(static_cast<uint64_t>(std::random_device{}()));
  for (const at::ScalarType dtype : {at::kFloat, at::kBFloat16}) {
    const RopeTable plain = rope_table(4093, 2, 3, 4, 48, 10000.0);
    const at::Tensor x = at::randn({2, 24, 4, 48}).to(dtype).transpose(1, 2);  // [B, H, T, D]
    const at::Tensor expected = apply_rope(x, plain);
    const at::Tensor got = apply_rotation(x, rope_rotation(plain, x.device(), dtype));
    EXPECT_TRUE(at::equal(got, expected)) << dtype;

    const at::Tensor positions = at::randint(0, 12000, {2, 2}, at::kLong);
    const RopeTable batched = rope_table_at(positions, 3, 4, 48, 10000.0);
    const at::Tensor y = at::randn({2, 4, 24, 48}).to(dtype);
    EXPECT_TRUE(at::equal(apply_rotation(y, rope_rotation(batched, y.device(), dtype)),
                          apply_rope(y, batched)))
        << dtype;
  }
}

TEST(Ops, RmsNormMatchesFormula) {
  at::manual_seed(3);
  const at::Tensor x = at::randn({2, 5, 8});
  const at::Tensor w = at::randn({8});
  const at::Tensor y = rms_norm(x, w, 1e-6);
  for (int i = 0; i < 2; ++i) {
    for (int t = 0; t < 5; ++t) {
      double mean_sq = 0;
      for (int c = 0; c < 8; ++c) mean_sq += std::pow(x[i][t][c].item<double>(), 2) / 8;
      for (int c = 0; c < 8; ++c) {
        const double expected =
            x[i][t][c].item<double>() / std::sqrt(mean_sq + 1e-6) * w[c].item<double>();
        EXPECT_NEAR(y[i][t][c].item<double>(), expected, 1e-5);
      }
    }
  }
}

TEST(Ops, LayerNormHasZeroMeanUnitVariance) {
  at::manual_seed(4);
  const at::Tensor y = layer_norm(at::randn({3, 64}) * 5 + 2, 1e-6);
  EXPECT_TRUE(at::allclose(y.mean(-1), at::zeros({3}), 1e-5, 1e-5));
  EXPECT_TRUE(at::allclose(y.var(-1, /*unbiased=*/false), at::ones({3}), 1e-4, 1e-4));
}

TEST(Ops, ModulationAppliesEachFramesVectors) {
  at::manual_seed(5);
  const int b = 2, f = 3, n = 4, d = 5;
  const at::Tensor x = at::randn({b, f * n, d});
  const at::Tensor shift = at::randn({b, f, d});
  const at::Tensor scale = at::randn({b, f, d});
  const at::Tensor gate = at::randn({b, f, d});
  const at::Tensor y = at::randn({b, f * n, d});
  const at::Tensor m = modulate(x, shift, scale);
  const at::Tensor r = gated_residual(x, y, gate);
  for (int i = 0; i < b; ++i) {
    for (int token = 0; token < f * n; ++token) {
      const int frame = token / n;
      const at::Tensor expected_m = x[i][token] * (1 + scale[i][frame]) + shift[i][frame];
      const at::Tensor expected_r = x[i][token] + gate[i][frame] * y[i][token];
      EXPECT_TRUE(at::allclose(m[i][token], expected_m, 1e-6, 1e-6));
      EXPECT_TRUE(at::allclose(r[i][token], expected_r, 1e-6, 1e-6));
    }
  }
}

TEST(Ops, TimestepEmbeddingMatchesFormula) {
  const at::Tensor t = at::tensor({0.0, 0.25, 1.0}, at::kDouble).view({1, 3});
  const at::Tensor e = timestep_embedding(t, 8);
  ASSERT_EQ(e.sizes(), at::IntArrayRef({1, 3, 8}));
  for (int j = 0; j < 3; ++j) {
    const double tt = 1000.0 * t[0][j].item<double>();
    for (int i = 0; i < 4; ++i) {
      const double w = std::pow(10000.0, -static_cast<double>(i) / 4);
      EXPECT_NEAR(e[0][j][i].item<double>(), std::cos(tt * w), 1e-5);
      EXPECT_NEAR(e[0][j][4 + i].item<double>(), std::sin(tt * w), 1e-5);
    }
  }
}

TEST(Ops, PatchifyOrderAndRoundTrip) {
  at::manual_seed(6);
  const at::Tensor frames = at::randn({2, 3, 4, 8, 12});  // B F C H W, patch 2x4
  const at::Tensor tokens = patchify(frames, 2, 4);
  ASSERT_EQ(tokens.sizes(), at::IntArrayRef({2, 3 * 4 * 3, 4 * 2 * 4}));
  // Token (frame 1, row 2, column 1), feature (channel 3, dy 1, dx 2).
  const int64_t token = 1 * 12 + 2 * 3 + 1, feature = 3 * 8 + 1 * 4 + 2;
  EXPECT_EQ(tokens[1][token][feature].item<float>(),
            frames[1][1][3][2 * 2 + 1][1 * 4 + 2].item<float>());
  EXPECT_TRUE(at::equal(unpatchify(tokens, 3, 4, 3, 4, 2, 4), frames));
}

TEST(Ops, BlockCausalMask) {
  const at::Tensor mask = block_causal_mask(4, 2, 2);  // 2 blocks of 2 frames of 2 tokens
  ASSERT_EQ(mask.sizes(), at::IntArrayRef({8, 8}));
  for (int q = 0; q < 8; ++q) {
    for (int k = 0; k < 8; ++k) EXPECT_EQ(mask[q][k].item<bool>(), k / 4 <= q / 4) << q << "," << k;
  }
}

// Where the fused kernels do not apply (CPU tensors, here), the dispatching forms are exactly the
// composition; tests/gpu/fused_ops_gpu_test.cpp compares the kernels themselves.
TEST(Ops, DispatchingFormsAreTheCompositionOnCpu) {
  at::manual_seed(21);
  const at::Tensor x = at::randn({2, 3 * 4, 64});
  const at::Tensor shift = at::randn({2, 3, 64}), scale = at::randn({2, 3, 64});
  EXPECT_FALSE(fused_kernels_apply(x));
  EXPECT_TRUE(at::equal(layer_norm_modulate(x, shift, scale, 1e-6),
                        modulate(layer_norm(x, 1e-6), shift, scale)));
  const at::Tensor weight = at::rand({64}) + 0.5;
  const RopeRotation rotation =
      rope_rotation(rope_table(5, 3, 2, 2, 32, 10000.0), at::kCPU, at::kFloat);
  const at::Tensor split = rms_norm(x, weight, 1e-6).view({2, 12, 2, 32}).transpose(1, 2);
  EXPECT_TRUE(
      at::equal(qk_norm_rope(x, weight, rotation, 2, 1e-6), apply_rotation(split, rotation)));
  const at::Tensor w = at::randn({96, 64}), b = at::randn({96});
  EXPECT_TRUE(at::equal(linear_gelu(x, w, b), at::gelu(at::linear(x, w, b), "tanh")));
}

}  // namespace
}  // namespace wc::model
