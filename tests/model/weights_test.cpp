// Weights: sharded safetensors round trips give identical outputs; every checkpoint mismatch
// is an error naming the file and tensor, and leaves the model untouched.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <torch/autograd.h>

#include <filesystem>

#include "engine/core/safetensors_torch.h"
#include "engine/model/dit.h"
#include "engine/model/weights.h"
#include "tests/model/model_test_util.h"

namespace wc::model {
namespace {

using ::testing::HasSubstr;
namespace fs = std::filesystem;

class WeightsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("wc_weights_" +
            std::string(::testing::UnitTest::GetInstance()->current_test_info()->name()));
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }

  at::Tensor output(CausalDiT& dit) {
    torch::NoGradGuard no_grad;
    at::manual_seed(1);
    const at::Tensor frames = at::randn({1, 2, 3, 16, 16});
    return dit->forward_train({frames, at::full({1, 2}, 0.5), at::ones({1, 2}, at::kLong), 0});
  }

  TensorMap tensors_of(CausalDiT& dit) {
    TensorMap map;
    for (const auto& item : dit->named_parameters())
      map[item.key()] = item.value().detach().clone();
    return map;
  }

  // Writes `tensors` as one file and returns the error of loading it into a fresh model, after
  // checking that the failed load left that model's parameters as they were.
  std::string load_error(const TensorMap& tensors) {
    const std::string path = (dir_ / "bad.safetensors").string();
    write_safetensors(path, tensors);
    CausalDiT dit(config_);
    init_random_weights(dit, 77);
    const TensorMap before = tensors_of(dit);
    const std::string error = testing::error_of([&] { load_weights(dit, path); });
    for (const auto& [name, value] : tensors_of(dit)) {
      EXPECT_TRUE(at::equal(value, before.at(name))) << name << " changed by a failed load";
    }
    EXPECT_THAT(error, HasSubstr(path));
    return error;
  }

  ModelConfig config_ = testing::tiny_config(2);
  fs::path dir_;
};

TEST_F(WeightsTest, ShardedRoundTripGivesIdenticalOutputs) {
  CausalDiT saved(config_);
  init_random_weights(saved, 1);
  save_weights(saved, dir_.string(), Dtype::kF32, /*max_shard_bytes=*/16 << 10);
  int shards = 0;
  for (const auto& entry : fs::directory_iterator(dir_)) {
    shards += entry.path().extension() == ".safetensors";
  }
  EXPECT_GT(shards, 1);
  CausalDiT loaded(config_);
  init_random_weights(loaded, 2);
  ASSERT_FALSE(at::equal(output(saved), output(loaded)));
  load_weights(loaded, dir_.string());
  EXPECT_TRUE(at::equal(output(saved), output(loaded)));
}

TEST_F(WeightsTest, Bf16CheckpointLoadsIntoFloatModel) {
  CausalDiT saved(config_);
  init_random_weights(saved, 1);
  save_weights(saved, dir_.string(), Dtype::kBF16);
  CausalDiT loaded(config_);
  load_weights(loaded, dir_.string());
  const auto a = saved->named_parameters();
  for (const auto& item : loaded->named_parameters()) {
    EXPECT_TRUE(at::equal(item.value(), a[item.key()].to(at::kBFloat16).to(at::kFloat)));
  }
}

TEST_F(WeightsTest, MissingTensorIsNamed) {
  CausalDiT dit(config_);
  TensorMap tensors = tensors_of(dit);
  tensors.erase("blocks.1.attn.norm_k.weight");
  EXPECT_THAT(load_error(tensors), HasSubstr("blocks.1.attn.norm_k.weight"));
}

TEST_F(WeightsTest, ExtraTensorIsNamed) {
  CausalDiT dit(config_);
  TensorMap tensors = tensors_of(dit);
  tensors["blocks.9.attn.q.weight"] = at::zeros({4});
  EXPECT_THAT(load_error(tensors), HasSubstr("blocks.9.attn.q.weight"));
}

TEST_F(WeightsTest, WrongShapeIsNamed) {
  CausalDiT dit(config_);
  TensorMap tensors = tensors_of(dit);
  tensors["blocks.0.mlp.fc1.weight"] = at::zeros({65, 32});
  const std::string error = load_error(tensors);
  EXPECT_THAT(error, HasSubstr("blocks.0.mlp.fc1.weight"));
  EXPECT_THAT(error, HasSubstr("shape"));
}

TEST_F(WeightsTest, WrongDtypeIsNamed) {
  CausalDiT dit(config_);
  TensorMap tensors = tensors_of(dit);
  tensors["head.proj.bias"] = tensors["head.proj.bias"].to(at::kBFloat16);
  const std::string error = load_error(tensors);
  EXPECT_THAT(error, HasSubstr("head.proj.bias"));
  EXPECT_THAT(error, HasSubstr("dtype"));
}

TEST_F(WeightsTest, IntegerCheckpointIsRejected) {
  CausalDiT dit(config_);
  TensorMap tensors = tensors_of(dit);
  tensors["patch_embed.weight"] = tensors["patch_embed.weight"].to(at::kInt);
  EXPECT_THAT(load_error(tensors), HasSubstr("patch_embed.weight"));
}

TEST_F(WeightsTest, NanIsNamed) {
  CausalDiT dit(config_);
  TensorMap tensors = tensors_of(dit);
  tensors["time_proj.weight"][3][1] = std::nanf("");
  const std::string error = load_error(tensors);
  EXPECT_THAT(error, HasSubstr("time_proj.weight"));
  EXPECT_THAT(error, HasSubstr("NaN"));
}

}  // namespace
}  // namespace wc::model
