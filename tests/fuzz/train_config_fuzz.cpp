// libFuzzer target: arbitrary bytes as a training config file (engine/train/train_config.h). The
// reader must either refuse them with wc::Error naming the file, or give a config within its
// fields' ranges whose learning-rate schedule is finite and within [0, peak] at every step.
// Built by run_fuzz.sh; the file lives in a folder of this process's own.
#include <unistd.h>

#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

#include "engine/core/error.h"
#include "engine/train/train_config.h"

namespace {

namespace fs = std::filesystem;

void require(bool condition) {
  if (!condition) std::abort();  // libFuzzer records the input as a crash
}

// This process's folder, removed when it exits.
struct ProcessFolder {
  fs::path dir = fs::temp_directory_path() / ("wc_train_config_fuzz_" + std::to_string(getpid()));
  ProcessFolder() { fs::create_directories(dir); }
  ~ProcessFolder() {
    std::error_code ignored;
    fs::remove_all(dir, ignored);
  }
};

const fs::path& input_file() {
  static const ProcessFolder folder;
  static const fs::path path = folder.dir / "input.json";
  return path;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  {
    std::ofstream out(input_file(), std::ios::binary | std::ios::trunc);
    out.write(reinterpret_cast<const char*>(data), static_cast<std::streamsize>(size));
  }
  wc::train::TrainConfig c;
  try {
    c = wc::train::load_train_config(input_file().string());
  } catch (const wc::Error& e) {
    require(std::string(e.what()).find(input_file().string()) != std::string::npos);
    return 0;
  }
  require(c.file == input_file().string());
  require(c.batch >= 1);
  require(c.clips.frames >= 2 && !c.noise.schedule_levels.empty());
  require(!c.has_tokens || (c.tokens.noisy_frames >= 1 && c.tokens.noisy_frames < c.clips.frames));
  require(c.state_dtype == "f32" || c.state_dtype == "bf16");
  for (int64_t step :
       {int64_t{1}, c.warmup_steps, c.warmup_steps + 1, c.steps, c.steps + 1, int64_t{1} << 31}) {
    if (step < 1) continue;
    const double lr = wc::train::learning_rate_at(c, step);
    require(std::isfinite(lr) && lr >= 0.0 && lr <= c.learning_rate * (1 + 1e-12));
  }
  return 0;
}
