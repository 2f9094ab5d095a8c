// The tile model on CUDA (skipped without CUDA): the tile tokenizer's encode and decode against
// the CPU, and a tile Session whose blocks replayed from a CUDA graph show the eager frames (the
// phase drawn first, the place bias and the decode's gathers all run on the device).
#include <gtest/gtest.h>
#include <torch/cuda.h>

#include <random>
#include <utility>
#include <vector>

#include "engine/model/model_config.h"
#include "engine/model/tile_tokenizer.h"
#include "engine/rollout/session.h"
#include "engine/train/tile_survey.h"

namespace wc::model {
namespace {

#define REQUIRE_CUDA()                                                                     \
  if (!torch::cuda::is_available()) {                                                      \
    GTEST_SKIP() << "no CUDA device in this build or on this machine (CPU-only LibTorch)"; \
  }

// Random tokens each of a kind its place allows, [B, F, h, w].
at::Tensor random_tokens(const TileTokenizer& tokenizer, int64_t b, int64_t f) {
  const at::Tensor allowed = tokenizer.allowed().to(at::kFloat);
  const at::Tensor picks = at::multinomial(allowed, b * f, /*replacement=*/true);  // [N, B·F]
  return picks.t().reshape({b, f, tokenizer.grid_h(), tokenizer.grid_w()});
}

TEST(TileGpu, TileTokenizerOnCudaMatchesTheCpu) {
  REQUIRE_CUDA();
  at::manual_seed(static_cast<uint64_t>(std::random_device{}()));
  const TileBook book = train::survey_tile_book(128, 128, 8, std::random_device{}());
  const TileTokenizer cpu(book, at::kCPU), cuda(book, at::kCUDA);
  const at::Tensor tokens = random_tokens(cpu, 2, 3);
  const at::Tensor frames = cpu.decode(tokens, at::kFloat);
  const auto bytes = [](const at::Tensor& x) {
    return ((x.to(at::kCPU, at::kFloat) + 1) * 127.5).round();
  };
  EXPECT_TRUE(bytes(cuda.decode(tokens.to(at::kCUDA), at::kBFloat16)).equal(bytes(frames)));
  // Encoded at its phases and at the closest: what the CPU encodes, misses counted alike.
  for (const at::Tensor& quarters : {cpu.quarters(tokens), at::Tensor()}) {
    at::Tensor misses, cpu_misses;
    const at::Tensor on_cuda =
        cuda.encode(frames.to(at::kCUDA, at::kBFloat16),
                    quarters.defined() ? quarters.to(at::kCUDA) : quarters, &misses);
    EXPECT_TRUE(on_cuda.to(at::kCPU).equal(cpu.encode(frames, quarters, &cpu_misses)));
    EXPECT_EQ(misses.item<int64_t>(), cpu_misses.item<int64_t>());
  }
  // Random bytes: the nearest entries, as on the CPU.
  const at::Tensor noise = at::randint(0, 256, {1, 2, 3, 128, 128}, at::kFloat) / 127.5 - 1.0;
  EXPECT_TRUE(cuda.encode(noise.to(at::kCUDA), at::Tensor())
                  .to(at::kCPU)
                  .equal(cpu.encode(noise, at::Tensor())));
}

ModelConfig tile_config() {
  ModelConfig c;
  c.name = "gpu-tiles";
  c.channels = 3;
  c.frame = {128, 128};
  c.patch_h = 16;
  c.patch_w = 16;
  c.hidden = 128;
  c.layers = 3;
  c.heads = 4;
  c.head_dim = 32;
  c.mlp = 256;
  c.freq_dim = 64;
  c.num_actions = 6;
  c.tokens.tile_book = std::make_shared<const TileBook>(train::survey_tile_book(128, 128, 8, 3));
  c.tokens.vocab = static_cast<int>(c.tokens.tile_book->vocab());
  c.tokens.passes = 3;
  c.tokens.sure = 0.9;
  c.tokens.first_quarter = {1, 1};
  return c;
}

TEST(TileGpu, GraphReplayShowsTheEagerFrames) {
  REQUIRE_CUDA();
  for (const std::string policy : {"dense", "headcast"}) {
    const auto run = [&](bool graphs) {
      rollout::SessionOptions options;
      options.cuda_graphs = graphs;
      auto session = rollout::Session::create(tile_config(), "", policy, {{"window", 8}}, 5,
                                              at::kCUDA, options);
      std::vector<at::Tensor> frames;
      for (int i = 0; i < 20; ++i) {
        session->step(static_cast<Action>(1 + i % 4));
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

}  // namespace
}  // namespace wc::model
