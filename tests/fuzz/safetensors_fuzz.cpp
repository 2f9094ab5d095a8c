// libFuzzer target: arbitrary bytes parsed as a safetensors file from memory. The parser must
// either reject them with wc::Error or accept a file whose views lie inside the input, tile its
// data section, and survive a write/parse round trip unchanged. Built by run_fuzz.sh.
#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <cstring>

#include "engine/core/error.h"
#include "engine/core/safetensors.h"

namespace {

void require(bool condition) {
  if (!condition) std::abort();  // libFuzzer records the input as a crash
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  wc::SafetensorsContents contents;
  try {
    contents = wc::parse_safetensors(data, size, "fuzz.safetensors");
  } catch (const wc::Error&) {
    return 0;
  }
  const uint8_t* data_start = data + 8 + contents.header_size;
  size_t covered = 0;
  for (const wc::TensorView& tensor : contents.tensors) {
    require(tensor.data >= data_start && tensor.data + tensor.byte_size <= data + size);
    require(tensor.numel() >= 0 &&
            static_cast<uint64_t>(tensor.numel()) * wc::dtype_size(tensor.dtype) ==
                tensor.byte_size);
    covered += tensor.byte_size;
    (void)wc::find_non_finite(tensor);
    try {
      wc::check_finite(tensor);
    } catch (const wc::Error&) {
      require(wc::find_non_finite(tensor).has_value());
    }
  }
  require(data_start + covered == data + size);

  // What we accept, we can write back, and it reads the same.
  const std::vector<uint8_t> rewritten =
      wc::serialize_safetensors(contents.tensors, contents.metadata);
  const wc::SafetensorsContents again =
      wc::parse_safetensors(rewritten.data(), rewritten.size(), "rewritten");
  require(again.tensors.size() == contents.tensors.size() && again.metadata == contents.metadata);
  for (const wc::TensorView& tensor : again.tensors) {
    const auto original =
        std::find_if(contents.tensors.begin(), contents.tensors.end(),
                     [&](const wc::TensorView& t) { return t.name == tensor.name; });
    require(
        original != contents.tensors.end() && original->dtype == tensor.dtype &&
        original->shape == tensor.shape && original->byte_size == tensor.byte_size &&
        (tensor.byte_size == 0 || std::memcmp(original->data, tensor.data, tensor.byte_size) == 0));
  }
  return 0;
}
