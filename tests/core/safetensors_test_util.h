// Builders for safetensors test inputs: tensors with known bytes and raw (possibly hostile) files.
#pragma once

#include <gtest/gtest.h>

#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <initializer_list>
#include <string>
#include <vector>

#include "engine/core/error.h"
#include "engine/core/safetensors.h"

namespace wc::testing {

// A tensor and the bytes it views; `view.data` points into `bytes`, so keep the object alive.
struct OwnedTensor {
  std::vector<uint8_t> bytes;
  TensorView view;
};

// Bytes 0, 1, 2, ... (mod 251) offset by `seed`: distinct per tensor, so mix-ups show.
inline OwnedTensor make_tensor(const std::string& name, Dtype dtype, Shape shape, int seed = 0) {
  OwnedTensor tensor;
  const auto numel = shape_numel(shape).value();
  tensor.bytes.resize(static_cast<size_t>(numel) * dtype_size(dtype));
  for (size_t i = 0; i < tensor.bytes.size(); ++i) {
    tensor.bytes[i] = static_cast<uint8_t>((i + static_cast<size_t>(seed)) % 251);
  }
  // Valid BOOL values only: 0 and 1.
  if (dtype == Dtype::kBool) {
    for (uint8_t& b : tensor.bytes) b &= 1;
  }
  tensor.view.name = name;
  tensor.view.dtype = dtype;
  tensor.view.shape = std::move(shape);
  tensor.view.data = tensor.bytes.data();
  tensor.view.byte_size = tensor.bytes.size();
  return tensor;
}

template <typename T>
OwnedTensor make_values(const std::string& name, Dtype dtype, const std::vector<T>& values) {
  OwnedTensor tensor = make_tensor(name, dtype, {static_cast<int64_t>(values.size())});
  std::memcpy(tensor.bytes.data(), values.data(), tensor.bytes.size());
  return tensor;
}

inline std::vector<TensorView> views_of(const std::vector<OwnedTensor>& tensors) {
  std::vector<TensorView> views;
  for (const OwnedTensor& tensor : tensors) views.push_back(tensor.view);
  return views;
}

// An 8-byte little-endian length, `header` verbatim, then `data_size` zero bytes.
inline std::vector<uint8_t> raw_file(const std::string& header, size_t data_size = 0,
                                     uint64_t length_override = UINT64_MAX) {
  const uint64_t length = length_override == UINT64_MAX ? header.size() : length_override;
  std::vector<uint8_t> bytes(8 + header.size() + data_size, 0);
  for (int i = 0; i < 8; ++i) bytes[i] = static_cast<uint8_t>(length >> (8 * i));
  std::copy(header.begin(), header.end(), bytes.begin() + 8);
  return bytes;
}

// The error message of parse_safetensors on `bytes`, or "" when it was accepted.
inline std::string parse_error(const std::vector<uint8_t>& bytes,
                               const std::string& file = "bad.safetensors") {
  try {
    parse_safetensors(bytes.data(), bytes.size(), file);
  } catch (const Error& error) {
    return error.what();
  }
  return "";
}

// An empty folder unique to the running test and process (ctest runs tests in parallel).
inline std::filesystem::path fresh_directory() {
  const auto* test = ::testing::UnitTest::GetInstance()->current_test_info();
  const auto dir =
      std::filesystem::temp_directory_path() / ("wc_" + std::string(test->test_suite_name()) + "_" +
                                                test->name() + "_" + std::to_string(::getpid()));
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  return dir;
}

}  // namespace wc::testing
