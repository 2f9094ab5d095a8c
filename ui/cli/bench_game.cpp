// `worldcast bench game`: how many frames per second the reference game renders on one core.
#include <CLI/CLI.hpp>

#include <cstdio>
#include <memory>
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <string>

#include "engine/core/atomic_file.h"
#include "engine/core/error.h"
#include "engine/game/game.h"
#include "engine/game/throughput.h"
#include "ui/cli/bench.h"

namespace wc::cli {
namespace {

struct BenchGameOptions {
  int64_t frames = 20000;
  int width = 128;
  int height = 128;
  uint64_t seed = 0;
  std::string json_path;
};

void run_bench_game(const BenchGameOptions& options) {
  game::ThroughputOptions throughput;
  throughput.frames = options.frames;
  throughput.width = options.width;
  throughput.height = options.height;
  throughput.seed = options.seed;
  game::ThroughputResult result;
  try {
    result = game::measure_throughput(throughput);
  } catch (const std::invalid_argument& error) {
    throw Error("bench game", error.what());
  }

  char hash[32];
  std::snprintf(hash, sizeof hash, "%016llx",
                static_cast<unsigned long long>(result.last_frame_hash));
  std::printf("bench game (one thread, seed %llu)\n",
              static_cast<unsigned long long>(options.seed));
  std::printf("| %-9s | %8s | %9s | %10s | %9s | %-16s |\n", "size", "frames", "seconds",
              "frames/s", "ms/frame", "last frame hash");
  std::printf("| %-9s | %8lld | %9.3f | %10.0f | %9.4f | %-16s |\n",
              (std::to_string(result.width) + "x" + std::to_string(result.height)).c_str(),
              static_cast<long long>(result.frames), result.seconds, result.frames_per_second,
              result.ms_per_frame, hash);

  if (!options.json_path.empty()) {
    const nlohmann::json report = {
        {"benchmark", "game"},
        {"threads", 1},
        {"seed", options.seed},
        {"width", result.width},
        {"height", result.height},
        {"frames", result.frames},
        {"seconds", result.seconds},
        {"frames_per_second", result.frames_per_second},
        {"ms_per_frame", result.ms_per_frame},
        {"crystals_collected", result.crystals_collected},
        {"last_frame_hash", hash},
    };
    write_file_atomically(options.json_path, report.dump(2) + "\n");
    std::printf("wrote %s\n", options.json_path.c_str());
  }
}

const bool kRegistered = register_bench("game", [](CLI::App& bench) {
  auto options = std::make_shared<BenchGameOptions>();
  CLI::App* command =
      bench.add_subcommand("game", "Frames per second of the reference game on one core");
  command->add_option("--frames", options->frames, "Frames to step (timed)")
      ->check(CLI::Range(int64_t{1}, int64_t{100000000}));
  command->add_option("--width", options->width, "Frame width in pixels")
      ->check(CLI::Range(game::kMinFrameSide, game::kMaxFrameSide));
  command->add_option("--height", options->height, "Frame height in pixels")
      ->check(CLI::Range(game::kMinFrameSide, game::kMaxFrameSide));
  command->add_option("--seed", options->seed, "World seed");
  command->add_option("--json", options->json_path, "Also write the result as JSON to FILE");
  command->callback([options] { run_bench_game(*options); });
});

}  // namespace
}  // namespace wc::cli
