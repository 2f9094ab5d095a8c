// `worldcast bench present`: presentation cost per frame, CUDA path vs CPU path in one run, from
// synthetic device frames of the given sizes; a table and, with --json, a JSON file.
#include <torch/cuda.h>
#include <CLI/CLI.hpp>

#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "engine/core/atomic_file.h"
#include "engine/core/error.h"
#include "ui/cli/bench.h"
#include "ui/frames/present_bench.h"

namespace wc::cli {
namespace {

struct BenchPresentOptions {
  std::vector<std::string> sizes{"128x128", "1280x720"};
  int frames = 300;
  int warmup = 30;
  std::string device;  // "" = cuda when available
  std::string dtype = "bf16";
  bool validate = false;
  std::string json_path;
};

ui::FrameSize2D parse_size(const std::string& text) {
  const size_t x = text.find('x');
  try {
    if (x == std::string::npos) throw std::invalid_argument("no x");
    size_t used_w = 0, used_h = 0;
    const int width = std::stoi(text.substr(0, x), &used_w);
    const int height = std::stoi(text.substr(x + 1), &used_h);
    if (used_w != x || used_h != text.size() - x - 1 || width <= 0 || height <= 0) {
      throw std::invalid_argument("bad numbers");
    }
    return {width, height};
  } catch (const std::exception&) {
    throw Error("--res", "expected WIDTHxHEIGHT (e.g. 1280x720), got '" + text + "'");
  }
}

void run_bench_present(const BenchPresentOptions& o) {
  ui::PresentBenchOptions options;
  for (const std::string& text : o.sizes) options.sizes.push_back(parse_size(text));
  options.frames = o.frames;
  options.warmup = o.warmup;
  options.validate = o.validate;
  const std::string device =
      o.device.empty() ? (torch::cuda::is_available() ? "cuda" : "cpu") : o.device;
  try {
    options.device = at::Device(device);
  } catch (const std::exception&) {
    throw Error("--device", "unknown device '" + device + "'");
  }
  if (o.dtype == "bf16") {
    options.dtype = at::kBFloat16;
  } else if (o.dtype == "f32") {
    options.dtype = at::kFloat;
  } else {
    throw Error("--dtype", "expected bf16 or f32, got '" + o.dtype + "'");
  }

  std::printf("bench present: frames on %s (%s), %d warm-up + %d timed frames per size and path\n",
              options.device.str().c_str(), o.dtype.c_str(), o.warmup, o.frames);
  std::printf("| %-10s | %-4s | %14s | %14s | %14s | %14s | %4s | %6s |\n", "size", "path",
              "publish p50 ms", "publish p99 ms", "present p50 ms", "present p99 ms", "D2H",
              "pixels");
  std::fflush(stdout);
  const ui::PresentBenchReport report =
      ui::run_present_bench(options, [](const ui::PresentBenchRow& row) {
        const std::string size =
            std::to_string(row.size.width) + "x" + std::to_string(row.size.height);
        std::printf("| %-10s | %-4s | %14.4f | %14.4f | %14.4f | %14.4f | %4s | %6s |\n",
                    size.c_str(), row.path.c_str(), row.publish_ms_p50, row.publish_ms_p99,
                    row.present_ms_p50, row.present_ms_p99, row.device_to_host ? "yes" : "no",
                    row.pixels_match ? "same" : "DIFF");
        std::fflush(stdout);
      });
  for (const ui::PresentBenchRow& cuda : report.rows) {
    if (cuda.path != "cuda") continue;
    for (const ui::PresentBenchRow& cpu : report.rows) {
      if (cpu.path == "cpu" && cpu.size.width == cuda.size.width &&
          cpu.size.height == cuda.size.height && cuda.present_ms_p50 > 0.0) {
        std::printf("%dx%d: cpu/cuda present p50 = %.2fx, publish p50 = %.2fx\n", cuda.size.width,
                    cuda.size.height, cpu.present_ms_p50 / cuda.present_ms_p50,
                    cuda.publish_ms_p50 > 0.0 ? cpu.publish_ms_p50 / cuda.publish_ms_p50 : 0.0);
      }
    }
  }
  if (!report.cuda_unavailable.empty()) {
    std::printf("cuda path not measured: %s\n", report.cuda_unavailable.c_str());
  }
  std::printf("Vulkan device: %s\n", report.vulkan_device.c_str());
  if (!o.json_path.empty()) {
    write_file_atomically(o.json_path, ui::present_bench_json(options, report).dump(2) + "\n");
    std::printf("wrote %s\n", o.json_path.c_str());
  }
  bool all_match = true;
  for (const ui::PresentBenchRow& row : report.rows) all_match = all_match && row.pixels_match;
  if (!all_match) throw Error("bench present", "a path presented different pixels (DIFF above)");
}

const bool kRegistered = register_bench("present", [](CLI::App& bench) {
  auto o = std::make_shared<BenchPresentOptions>();
  CLI::App* command = bench.add_subcommand(
      "present",
      "Per-frame presentation cost: CUDA frame path vs CPU frame path (synthetic frames)");
  command->add_option("--res", o->sizes, "Frame sizes WIDTHxHEIGHT (comma-separated)")
      ->delimiter(',')
      ->capture_default_str();
  command->add_option("--frames", o->frames, "Timed frames per size and path")
      ->check(CLI::Range(1, 1000000))
      ->capture_default_str();
  command->add_option("--warmup", o->warmup, "Untimed frames first")
      ->check(CLI::Range(0, 100000))
      ->capture_default_str();
  command->add_option("--device", o->device,
                      "Where the frames live: cuda[:N] (both paths) or cpu (CPU path only); "
                      "default cuda when available");
  command->add_option("--dtype", o->dtype, "Frame dtype: bf16 (the model's on CUDA) or f32")
      ->capture_default_str();
  command->add_flag("--validate", o->validate,
                    "Vulkan validation on (slower; errors fail the run)");
  command->add_option("--json", o->json_path, "Also write the result as JSON to FILE");
  command->callback([o] { run_bench_present(*o); });
});

}  // namespace
}  // namespace wc::cli
