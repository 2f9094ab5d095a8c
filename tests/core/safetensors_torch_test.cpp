// The LibTorch adapter: at::Tensor maps to files and back, for every dtype we write.
#include "engine/core/safetensors_torch.h"

#include <gtest/gtest.h>

#include <filesystem>

#include "engine/core/error.h"
#include "tests/core/safetensors_test_util.h"

namespace wc {
namespace {

namespace fs = std::filesystem;

TensorMap sample_tensors() {
  at::manual_seed(7);
  TensorMap tensors;
  tensors["f32"] = at::randn({3, 5});
  tensors["f16"] = at::randn({4, 2}).to(at::kHalf);
  tensors["bf16"] = at::randn({7}).to(at::kBFloat16);
  tensors["f64"] = at::randn({2, 2}, at::kDouble);
  tensors["i64"] = at::arange(6, at::kLong).reshape({2, 3});
  tensors["i32"] = at::arange(-3, 3, at::kInt);
  tensors["u8"] = at::arange(0, 250, 50, at::kByte);
  tensors["bool"] = at::arange(5) > 2;
  tensors["transposed"] = at::randn({3, 4}).t();  // not contiguous: written as its values
  tensors["scalar"] = at::scalar_tensor(2.5);
  return tensors;
}

void expect_same(const TensorMap& expected, const TensorMap& got) {
  ASSERT_EQ(expected.size(), got.size());
  for (const auto& [name, tensor] : expected) {
    ASSERT_TRUE(got.count(name)) << name;
    EXPECT_EQ(got.at(name).scalar_type(), tensor.scalar_type()) << name;
    EXPECT_EQ(got.at(name).sizes(), tensor.sizes()) << name;
    EXPECT_TRUE(at::equal(got.at(name), tensor)) << name;
  }
}

TEST(SafetensorsTorch, RoundTripEveryDtype) {
  const fs::path path = testing::fresh_directory() / "t.safetensors";
  const TensorMap tensors = sample_tensors();
  write_safetensors(path.string(), tensors, {{"format", "pt"}});
  const Checkpoint checkpoint = Checkpoint::open(path.string());
  EXPECT_EQ(checkpoint.at("bf16").dtype, Dtype::kBF16);
  EXPECT_EQ(checkpoint.at("transposed").shape, (Shape{4, 3}));
  expect_same(tensors, load_tensors(checkpoint));
}

TEST(SafetensorsTorch, ShardedRoundTrip) {
  const fs::path dir = testing::fresh_directory();
  const TensorMap tensors = sample_tensors();
  EXPECT_GT(write_sharded_checkpoint(dir.string(), tensors, {}, {64}).size(), 3u);
  expect_same(tensors, load_tensors(Checkpoint::open(dir.string())));
}

TEST(SafetensorsTorch, UnalignedViewsAreCopied) {
  // One spare byte in front makes every element address odd.
  std::vector<uint8_t> storage(1 + 3 * sizeof(float));
  const float values[3] = {1.f, -2.f, 3.5f};
  std::memcpy(storage.data() + 1, values, sizeof(values));
  TensorView view;
  view.name = "odd";
  view.dtype = Dtype::kF32;
  view.shape = {3};
  view.data = storage.data() + 1;
  view.byte_size = sizeof(values);
  const at::Tensor tensor = to_tensor(view);
  EXPECT_TRUE(at::equal(tensor, at::tensor({1.f, -2.f, 3.5f})));
  storage.assign(storage.size(), 0);  // the tensor owns its copy
  EXPECT_EQ(tensor[1].item<float>(), -2.f);
}

TEST(SafetensorsTorch, RejectsWhatSafetensorsCannotHold) {
  const fs::path path = testing::fresh_directory() / "bad.safetensors";
  EXPECT_THROW(
      write_safetensors(path.string(), TensorMap{{"c", at::randn({2}, at::kComplexFloat)}}), Error);
  EXPECT_THROW(write_safetensors(path.string(), TensorMap{{"u", at::Tensor()}}), Error);
  EXPECT_FALSE(fs::exists(path));

  std::vector<uint8_t> bytes = {0, 1, 2};
  TensorView flags;
  flags.name = "flags";
  flags.file = "f.safetensors";
  flags.dtype = Dtype::kBool;
  flags.shape = {3};
  flags.data = bytes.data();
  flags.byte_size = 3;
  try {
    to_tensor(flags);
    FAIL();
  } catch (const Error& error) {
    EXPECT_NE(std::string(error.what()).find("f.safetensors: tensor 'flags': BOOL byte 2"),
              std::string::npos);
  }
}

}  // namespace
}  // namespace wc
