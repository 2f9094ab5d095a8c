// Writes the checkpoints the `worldcast inspect` tests read: good, sharded, corrupt and NaN.
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>
#include <vector>

#include "engine/core/safetensors.h"

namespace {

wc::TensorView view_of(const std::string& name, wc::Dtype dtype, wc::Shape shape,
                       const std::vector<uint8_t>& bytes) {
  wc::TensorView view;
  view.name = name;
  view.dtype = dtype;
  view.shape = std::move(shape);
  view.data = bytes.data();
  view.byte_size = bytes.size();
  return view;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: %s OUTPUT_DIR\n", argv[0]);
    return 2;
  }
  namespace fs = std::filesystem;
  const fs::path out = argv[1];
  fs::create_directories(out / "good");
  std::vector<uint8_t> weights(4 * 8 * sizeof(float)), bias(8 * 2, 0);
  for (size_t i = 0; i < weights.size() / 4; ++i) {
    const float value = 0.25f * static_cast<float>(i);
    std::memcpy(weights.data() + 4 * i, &value, 4);
  }
  const std::vector<wc::TensorView> tensors = {
      view_of("encoder.weight", wc::Dtype::kF32, {4, 8}, weights),
      view_of("decoder.bias", wc::Dtype::kBF16, {8}, bias)};
  wc::write_safetensors((out / "good" / "model.safetensors").string(), tensors, {{"format", "pt"}});
  std::ofstream(out / "good" / "config.json") << R"({"name": "fixture", "layers": 2})";
  wc::write_sharded_checkpoint((out / "sharded").string(), tensors, {}, {64});

  // Cut one byte: the last tensor in the data ('decoder.bias') now runs past the end.
  std::vector<uint8_t> bytes = wc::serialize_safetensors(tensors);
  bytes.pop_back();
  std::ofstream(out / "corrupt.safetensors", std::ios::binary)
      .write(reinterpret_cast<const char*>(bytes.data()),
             static_cast<std::streamsize>(bytes.size()));

  const float nan = std::numeric_limits<float>::quiet_NaN();
  std::memcpy(weights.data() + 4 * 7, &nan, 4);
  wc::write_safetensors((out / "nan.safetensors").string(), tensors);
  return 0;
}
