// The token model on CUDA (skipped without CUDA): the tokenizer's exact encode and its decode
// against the CPU, and a token Session whose blocks replayed from a CUDA graph show the eager
// frames (Note [Masked sampling] draws from the block's noise, so a replay draws the same), and
// the training stream's attention by frame in bf16 against the CPU's masked float32 reference.
#include <gtest/gtest.h>
#include <torch/csrc/autograd/autograd.h>
#include <torch/cuda.h>

#include <algorithm>
#include <random>
#include <utility>
#include <vector>

#include "engine/attention/sdpa.h"
#include "engine/model/codebook.h"
#include "engine/model/masked_stream.h"
#include "engine/model/model_config.h"
#include "engine/model/tokenizer.h"
#include "engine/rollout/session.h"

namespace wc::model {
namespace {

#define REQUIRE_CUDA()                                                                     \
  if (!torch::cuda::is_available()) {                                                      \
    GTEST_SKIP() << "no CUDA device in this build or on this machine (CPU-only LibTorch)"; \
  }

Codebook random_book(uint32_t seed, int entries) {
  std::mt19937 random(seed);
  Codebook book;
  book.patch = 4;
  book.colours = {{0, 0, 0}, {255, 255, 255}, {98, 178, 74}, {46, 102, 204}, {230, 208, 140}};
  while (book.size() < entries) {
    std::vector<uint8_t> e(16);
    for (auto& x : e) x = static_cast<uint8_t>(random() % 5);
    if (std::find(book.entries.begin(), book.entries.end(), e) == book.entries.end())
      book.entries.push_back(e);
  }
  return book;
}

TEST(TokenGpu, TokenizerOnCudaMatchesTheCpu) {
  REQUIRE_CUDA();
  const Codebook book = random_book(std::random_device{}(), 300);
  const Tokenizer cpu(book, at::kCPU), cuda(book, at::kCUDA);
  const at::Tensor tokens = at::randint(0, book.size(), {2, 3, 8, 8}, at::kLong);
  const at::Tensor frames = cpu.decode(tokens, at::kFloat);
  // bf16 holds every byte's frame value closely enough to round back to the byte.
  const auto bytes = [](const at::Tensor& x) {
    return ((x.to(at::kCPU, at::kFloat) + 1) * 127.5).round();
  };
  EXPECT_TRUE(bytes(cuda.decode(tokens.to(at::kCUDA), at::kBFloat16)).equal(bytes(frames)));
  at::Tensor misses;
  EXPECT_TRUE(cuda.encode(frames.to(at::kCUDA, at::kBFloat16), &misses).to(at::kCPU).equal(tokens));
  EXPECT_EQ(misses.item<int64_t>(), 0);
  // Random bytes: the nearest entry, as on the CPU.
  const at::Tensor noise = at::randint(0, 256, {1, 4, 3, 32, 32}, at::kFloat) / 127.5 - 1.0;
  at::Tensor cpu_misses;
  EXPECT_TRUE(
      cuda.encode(noise.to(at::kCUDA), &misses).to(at::kCPU).equal(cpu.encode(noise, &cpu_misses)));
  EXPECT_EQ(misses.item<int64_t>(), cpu_misses.item<int64_t>());
}

ModelConfig token_config() {
  ModelConfig c;
  c.name = "gpu-tokens";
  c.channels = 3;
  c.frame = {32, 32};
  c.patch_h = 4;
  c.patch_w = 4;
  c.hidden = 128;
  c.layers = 3;
  c.heads = 4;
  c.head_dim = 32;
  c.mlp = 256;
  c.freq_dim = 64;
  c.tokens.vocab = 300;
  c.tokens.passes = 3;
  c.tokens.codebook = std::make_shared<const Codebook>(random_book(11, 300));
  return c;
}

// Tile passes (Note [Tile passes]) and drawn quarters follow the grid on the device with no sync,
// so a replayed block draws what the eager one does with them too.
TEST(TokenGpu, GraphReplayShowsTheEagerFrames) {
  REQUIRE_CUDA();
  ModelConfig tiled = token_config();
  tiled.tile_quarters = {1, 1};
  tiled.tokens.drawn_quarters = true;
  tiled.tokens.tile_passes = true;
  for (const auto& [policy, config] : {std::make_pair(std::string("dense"), token_config()),
                                       std::make_pair(std::string("headcast"), token_config()),
                                       std::make_pair(std::string("headcast"), tiled)}) {
    const auto run = [&, &policy = policy, &config = config](bool graphs) {
      rollout::SessionOptions options;
      options.cuda_graphs = graphs;
      auto session =
          rollout::Session::create(config, "", policy, {{"window", 4}}, 3, at::kCUDA, options);
      std::vector<at::Tensor> frames;
      for (int i = 0; i < 20; ++i) {
        if (i == 12) session->configure_play({{"temperature", 0.5}});
        session->step(static_cast<Action>(i % 5));
        frames.push_back(session->frame_on_device().to(at::kCPU, at::kFloat));
      }
      return std::make_pair(at::stack(frames), session->stats());
    };
    const auto [eager, eager_stats] = run(false);
    const auto [graphed, stats] = run(true);
    EXPECT_EQ(eager_stats.graph_replayed_blocks, 0) << policy;
    EXPECT_GE(stats.graph_replayed_blocks, 6) << policy;
    EXPECT_TRUE(at::equal(graphed, eager)) << policy;
  }
}

// Note [Play settings], live: a temperature change drops the recorded block, so replay after it
// draws what eager play draws at the new temperature, not what the recording baked in.
TEST(TokenGpu, ALiveTemperatureReRecordsTheBlock) {
  REQUIRE_CUDA();
  const ModelConfig c = token_config();
  const auto run = [&](bool graphs, bool change) {
    rollout::SessionOptions options;
    options.cuda_graphs = graphs;
    auto session = rollout::Session::create(c, "", "dense", {{"window", 4}}, 9, at::kCUDA, options);
    std::vector<at::Tensor> frames;
    for (int i = 0; i < 24; ++i) {
      if (change && i == 12) session->configure_play({{"temperature", 0.05}});
      session->step(static_cast<Action>(1 + i % 4));
      frames.push_back(session->frame_on_device().to(at::kCPU, at::kFloat));
    }
    return std::make_pair(at::stack(frames), session->stats());
  };
  const auto [eager, eager_stats] = run(false, true);
  const auto [graphed, stats] = run(true, true);
  const auto [unchanged, unchanged_stats] = run(true, false);
  EXPECT_EQ(eager_stats.graph_replayed_blocks, 0);
  EXPECT_GE(stats.graph_replayed_blocks, 8);
  EXPECT_TRUE(at::equal(graphed, eager));
  EXPECT_TRUE(at::equal(graphed.slice(0, 0, 12), unchanged.slice(0, 0, 12)));
  EXPECT_FALSE(at::equal(graphed.slice(0, 12), unchanged.slice(0, 12)));
}

// Note [Masked stream attention]: the fused kernels (grouped frames with a mask, single frames
// and copies without) against the whole stream's mask on the CPU, values and gradients.
TEST(TokenGpu, MaskedStreamAttentionInBf16MatchesTheCpuReference) {
  REQUIRE_CUDA();
  std::mt19937 random(std::random_device{}());
  for (int group : {1, 4}) {
    MaskedStream stream;
    stream.frames = 9;
    stream.tokens_per_frame = 64;
    stream.copies = {1, 4, 5, 9};
    std::shuffle(stream.copies.begin(), stream.copies.end(), random);
    const int64_t tokens = int64_t{stream.stream_frames()} * stream.tokens_per_frame;
    const auto generator = static_cast<uint64_t>(random());
    at::manual_seed(generator);
    const at::Tensor q = at::randn({2, 4, tokens, 32}), k = at::randn({2, 4, tokens, 32}),
                     v = at::randn({2, 4, tokens, 32}), upstream = at::randn({2, 4, tokens, 32});
    const auto on = [](const at::Tensor& x, at::Device device, at::ScalarType dtype) {
      return x.to(device, dtype).detach().set_requires_grad(true);
    };
    const at::Tensor qc = on(q, at::kCUDA, at::kBFloat16), kc = on(k, at::kCUDA, at::kBFloat16),
                     vc = on(v, at::kCUDA, at::kBFloat16);
    const at::Tensor fast = masked_stream_attention(qc, kc, vc, stream, group);
    const auto fast_grads =
        torch::autograd::grad({fast}, {qc, kc, vc}, {upstream.to(at::kCUDA, at::kBFloat16)});
    const at::Tensor qr = on(q, at::kCPU, at::kFloat), kr = on(k, at::kCPU, at::kFloat),
                     vr = on(v, at::kCPU, at::kFloat);
    const at::Tensor reference = attention::reference_attention(qr, kr, vr, stream.mask(at::kCPU));
    const auto reference_grads = torch::autograd::grad({reference}, {qr, kr, vr}, {upstream});
    EXPECT_LT((fast.to(at::kCPU, at::kFloat) - reference).abs().max().item<float>(), 0.05f)
        << "group " << group;
    for (size_t i = 0; i < 3; ++i) {
      const at::Tensor got = fast_grads[i].to(at::kCPU, at::kFloat);
      const float scale = reference_grads[i].abs().max().item<float>();
      EXPECT_LT((got - reference_grads[i]).abs().max().item<float>(), 0.05f * std::max(1.0f, scale))
          << "group " << group << ", gradient " << i;
    }
  }
}

}  // namespace
}  // namespace wc::model
