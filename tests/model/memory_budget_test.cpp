// Note [Memory budget]: the estimate counts the weights exactly and the cache at the window, and
// a model that cannot fit is refused at once, naming what it needs and what is free.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <chrono>

#include "engine/model/dit.h"
#include "engine/model/memory_budget.h"
#include "engine/model/model_config.h"
#include "tests/model/model_test_util.h"

namespace wc::model {
namespace {

using ::testing::HasSubstr;

const std::string kConfigs = std::string(WORLDCAST_SOURCE_DIR) + "/assets/configs/";

int64_t parameter_bytes(CausalDiT& net) {
  int64_t bytes = 0;
  for (const at::Tensor& p : net->parameters()) bytes += p.numel() * p.element_size();
  return bytes;
}

TEST(MemoryBudget, CountsTheWeightsTheCacheAndAForward) {
  const ModelConfig c = testing::tiny_config();
  CausalDiT net(c);
  const int64_t weights = parameter_bytes(net);
  const FrameSize size = c.frame;
  const int64_t tokens = int64_t{c.grid_h(size)} * c.grid_w(size);
  const int64_t cache_per_frame = tokens * 2 * c.layers * c.heads * c.head_dim * 4;
  const MemoryNeed one = play_memory(c, size, at::kFloat, at::kCPU, 0);
  const MemoryNeed eight = play_memory(c, size, at::kFloat, at::kCPU, 8);
  EXPECT_GT(one.host, weights + cache_per_frame * c.frames_per_block);
  // Seven more frames of cache, and logits over them in the unfused forward.
  EXPECT_GE(eight.host - one.host, cache_per_frame * (8 - c.frames_per_block));
  EXPECT_EQ(one.device, 0);
  // Many layers: each layer's tensors once more.
  ModelConfig deep = c;
  deep.layers = 7;
  CausalDiT deep_net(deep);
  EXPECT_EQ(play_memory(deep, size, at::kFloat, at::kCUDA, 0).host, parameter_bytes(deep_net));
  // On a device: float32 weights on the host where the model is built, the rest there.
  const MemoryNeed cuda = play_memory(c, size, at::kBFloat16, at::Device(at::kCUDA, 0), 8);
  EXPECT_EQ(cuda.host, weights);
  EXPECT_GT(cuda.device, weights / 2 + cache_per_frame / 2 * 7);
  EXPECT_THAT(eight.detail, HasSubstr("8-frame cache"));
}

TEST(MemoryBudget, TrainingCountsWeightsGradientsMomentsAndEma) {
  const ModelConfig c = testing::tiny_config();
  CausalDiT net(c);
  const MemoryNeed need = training_memory(c, at::kCPU, 4, 64);
  EXPECT_GT(need.host, 5 * parameter_bytes(net));
}

TEST(MemoryBudget, TheHostHasSomeMemoryFree) {
  EXPECT_GT(available_memory(at::kCPU), 0);
}

// A config inside every bound that no machine holds: refused in well under a second.
TEST(MemoryBudget, RefusesAGiantConfigAtOnceWithItsNeeds) {
  ModelConfig c = load_model_config(kConfigs + "game-small.json");
  c.hidden = 65536;
  c.layers = 1024;
  c.mlp = 1 << 20;
  c.heads = 512;
  c.head_dim = 128;
  const auto start = std::chrono::steady_clock::now();
  try {
    require_memory("giant.json", play_memory(c, c.frame, at::kFloat, at::kCPU, 32), at::kCPU);
    ADD_FAILURE() << "a giant model was not refused";
  } catch (const OutOfMemory& e) {
    EXPECT_THAT(e.what(), HasSubstr("giant.json: needs "));
    EXPECT_THAT(e.what(), HasSubstr("GB on the host"));
    EXPECT_THAT(e.what(), HasSubstr("available"));
  }
  EXPECT_LT(std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count(), 1.0);
  // Sizes that overflow int64 saturate rather than wrap to a small need, and cost no time.
  c.layers = 1 << 20;
  EXPECT_GT(play_memory(c, c.frame, at::kFloat, at::kCPU, 1 << 20).host, int64_t{1} << 50);
  EXPECT_LT(std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count(), 1.0);
}

TEST(MemoryBudget, PassesTheBundledModel) {
  const ModelConfig c = load_model_config(kConfigs + "game-tokens.json");
  EXPECT_NO_THROW(
      require_memory("game-tokens", play_memory(c, c.frame, at::kFloat, at::kCPU, 32), at::kCPU));
}

TEST(MemoryBudget, FormatsBytes) {
  EXPECT_EQ(format_bytes(int64_t{12300000000}), "12.3 GB");
  EXPECT_EQ(format_bytes(512000000), "512 MB");
  EXPECT_EQ(format_bytes(4000), "4 KB");
}

}  // namespace
}  // namespace wc::model
