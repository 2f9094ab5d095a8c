// Note [Masked stream attention]: attention by query frame equals attention under the stream's
// whole [T, T] mask, in value and in gradient, on fresh random inputs.
#include <gtest/gtest.h>
#include <torch/csrc/autograd/autograd.h>

#include <algorithm>
#include <random>

#include "engine/attention/sdpa.h"
#include "engine/model/masked_stream.h"

namespace wc::model {
namespace {

// A random stream: 2–9 clean frames and copies of distinct frames in [0, frames], ascending.
MaskedStream random_stream(std::mt19937& random) {
  MaskedStream stream;
  stream.frames = std::uniform_int_distribution<int>(2, 9)(random);
  stream.tokens_per_frame = std::uniform_int_distribution<int>(1, 5)(random);
  std::vector<int> frames(static_cast<size_t>(stream.frames) + 1);
  for (int i = 0; i <= stream.frames; ++i) frames[static_cast<size_t>(i)] = i;
  std::shuffle(frames.begin(), frames.end(), random);
  frames.resize(std::uniform_int_distribution<size_t>(0, frames.size())(random));
  std::sort(frames.begin(), frames.end());
  stream.copies = frames;
  return stream;
}

TEST(MaskedStream, MaskMatchesItsDefinition) {
  const MaskedStream stream{5, {1, 3, 5}, 3};
  const int n = 3, total = 8;
  const at::Tensor mask = stream.mask(at::kCPU);
  ASSERT_EQ(mask.sizes(), (at::IntArrayRef{total * n, total * n}));
  const auto m = mask.accessor<bool, 2>();
  for (int i = 0; i < total * n; ++i) {
    for (int j = 0; j < total * n; ++j) {
      const int fi = i / n, fj = j / n;
      const bool may =
          fi < stream.frames
              ? fj <= fi
              : fj == fi || fj < stream.copies[static_cast<size_t>(fi - stream.frames)];
      ASSERT_EQ(m[i][j], may) << i << " " << j;
    }
  }
}

TEST(MaskedStream, AttentionByFrameEqualsTheMaskedReferenceWithGradients) {
  std::mt19937 random(std::random_device{}());
  for (int trial = 0; trial < 12; ++trial) {
    const MaskedStream stream = random_stream(random);
    const int group = std::uniform_int_distribution<int>(1, 5)(random);
    const int64_t tokens = int64_t{stream.stream_frames()} * stream.tokens_per_frame;
    const auto leaf = [&] {
      return at::randn({2, 3, tokens, 8}, at::kFloat).set_requires_grad(true);
    };
    const at::Tensor q = leaf(), k = leaf(), v = leaf();
    const at::Tensor upstream = at::randn({2, 3, tokens, 8}, at::kFloat);
    const auto grads = [&](const at::Tensor& out) {
      return torch::autograd::grad({out}, {q, k, v}, {upstream});
    };
    const at::Tensor fast = masked_stream_attention(q, k, v, stream, group);
    const auto fast_grads = grads(fast);
    // The reference: one softmax under the whole stream's mask.
    const at::Tensor reference = attention::reference_attention(q, k, v, stream.mask(at::kCPU));
    const auto reference_grads = grads(reference);

    const std::string where =
        "trial " + std::to_string(trial) + ", " + std::to_string(stream.frames) + " frames, " +
        std::to_string(stream.copies.size()) + " copies, group " + std::to_string(group);
    EXPECT_TRUE(at::allclose(fast, reference, 1e-5, 1e-5)) << where;
    for (size_t i = 0; i < 3; ++i) {
      EXPECT_TRUE(at::allclose(fast_grads[i], reference_grads[i], 1e-4, 1e-5))
          << where << ", gradient " << i;
    }
  }
}

TEST(MaskedStream, RefusesQueriesOfAnotherLength) {
  const MaskedStream stream{3, {2}, 4};
  const at::Tensor q = at::randn({1, 1, 15, 4});
  EXPECT_THROW(masked_stream_attention(q, q, q, stream), c10::Error);
}

}  // namespace
}  // namespace wc::model
