// libFuzzer target: arbitrary bytes as a sharded checkpoint's index
// (model.safetensors.index.json) beside two valid shards. Opening the folder must either refuse
// it with wc::Error naming the index or a shard, or give a checkpoint whose tensors are the shards'
// own, each once, sorted by name. Built by run_fuzz.sh.
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

#include "engine/core/error.h"
#include "engine/core/safetensors.h"

namespace {

namespace fs = std::filesystem;

void require(bool condition) {
  if (!condition) std::abort();  // libFuzzer records the input as a crash
}

// A folder of this process with two one-tensor shards: "a" (F32 [2]) and "b" (I64 [1]).
const fs::path& folder() {
  static const fs::path dir = [] {
    const fs::path d = fs::temp_directory_path() / ("wc_index_fuzz_" + std::to_string(getpid()));
    fs::create_directories(d);
    const float a[2] = {1.0f, -2.0f};
    const int64_t b[1] = {7};
    wc::TensorView ta, tb;
    ta.name = "a";
    ta.dtype = wc::Dtype::kF32;
    ta.shape = {2};
    ta.data = reinterpret_cast<const uint8_t*>(a);
    ta.byte_size = sizeof a;
    tb.name = "b";
    tb.dtype = wc::Dtype::kI64;
    tb.shape = {1};
    tb.data = reinterpret_cast<const uint8_t*>(b);
    tb.byte_size = sizeof b;
    wc::write_safetensors((d / "model-00001-of-00002.safetensors").string(), {ta});
    wc::write_safetensors((d / "model-00002-of-00002.safetensors").string(), {tb});
    return d;
  }();
  return dir;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const fs::path index = folder() / "model.safetensors.index.json";
  {
    std::ofstream out(index, std::ios::binary | std::ios::trunc);
    out.write(reinterpret_cast<const char*>(data), static_cast<std::streamsize>(size));
  }
  try {
    const wc::Checkpoint checkpoint = wc::Checkpoint::open(folder().string());
    const auto& tensors = checkpoint.tensors();
    for (size_t i = 0; i < tensors.size(); ++i) {
      require(tensors[i]->name == "a" || tensors[i]->name == "b");
      require(i == 0 || tensors[i - 1]->name < tensors[i]->name);
      require(checkpoint.find(tensors[i]->name) == tensors[i]);
    }
  } catch (const wc::Error& e) {
    require(std::string(e.what()).find(folder().string()) != std::string::npos);
  }
  return 0;
}
