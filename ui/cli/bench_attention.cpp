// `worldcast bench attention`: one attention layer at Wan 2.1-1.3B shapes, every policy against
// dense (bench/attention_bench.h does the work; this file parses arguments).
#include <ATen/ATen.h>
#include <CLI/CLI.hpp>

#include <cstdio>
#include <fstream>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "bench/attention_bench.h"
#include "engine/core/atomic_file.h"
#include "engine/core/bounded_read.h"
#include "engine/core/error.h"
#include "engine/core/json_text.h"
#include "ui/cli/attention_bench_options.h"
#include "ui/cli/bench.h"

namespace wc::cli {
namespace {

struct BenchAttentionArgs {
  std::string resolution;  // empty: 480p on CUDA, a small grid on the CPU
  std::string policies = "dense,headcast,dummy";
  std::string cast;    // FILE with {"layers": [[...]]}, or "online"
  std::string mix;     // s,d,sp,g
  std::string device;  // empty: cuda when present, else cpu
  std::string dtype;   // empty: bf16 on CUDA, f32 on the CPU
  int iters = 20;
  int warmup = 5;
  int heads = 12;
  int head_dim = 128;
  uint64_t seed = 0;
  std::string cell_mode = "rounded";
  std::string json_path;
};

// Float32 reference attention over a 21-frame window at 480p takes seconds per call on a few
// cores; this grid keeps a CPU run to seconds while exercising every path.
constexpr const char* kCpuDefaultResolution = "16x10";

// A cast file is a few lines per layer; a megabyte is far beyond any model's.
constexpr int64_t kMaxCastFileBytes = int64_t{1} << 20;

nlohmann::json read_cast_file(const std::string& path) {
  // Note [Bounded reads], Note [Checked JSON].
  const nlohmann::json cast =
      parse_json(read_bounded_file(path, kMaxCastFileBytes, "cast file"), path);
  if (!cast.is_object() || cast.size() != 1 || !cast.contains("layers")) {
    throw Error(path,
                "a cast file must be {\"layers\": [[\"sink\", \"dummy\", \"spatial\", "
                "\"global\", ...]]}");
  }
  return cast;
}

attention::AttentionBenchOptions to_options(const BenchAttentionArgs& args) {
  attention::AttentionBenchOptions options;
  const BenchTarget target = resolve_bench_target(args.device, args.dtype);
  options.device = target.device;
  options.dtype = target.dtype;
  options.resolution = !args.resolution.empty()  ? args.resolution
                       : target.device.is_cuda() ? "480p"
                                                 : kCpuDefaultResolution;
  options.policies = split_commas(args.policies);
  if (!args.cast.empty()) {
    options.headcast_cast =
        args.cast == "online" ? nlohmann::json(nullptr) : read_cast_file(args.cast);
  } else if (!args.mix.empty()) {
    options.headcast_cast = parse_headcast_mix(args.mix);
  }
  options.iters = args.iters;
  options.warmup = args.warmup;
  options.num_heads = args.heads;
  options.head_dim = args.head_dim;
  options.seed = args.seed;
  options.cell_mode = args.cell_mode;
  return options;
}

void run_bench_attention(const BenchAttentionArgs& args) {
  const attention::AttentionBenchReport report = attention::run_attention_bench(to_options(args));
  std::fputs(report.table().c_str(), stdout);
  if (!args.json_path.empty()) {
    write_file_atomically(args.json_path, report.to_json().dump(2) + "\n");
    std::printf("wrote %s\n", args.json_path.c_str());
  }
}

const bool kRegistered = register_bench("attention", [](CLI::App& bench) {
  auto args = std::make_shared<BenchAttentionArgs>();
  CLI::App* command = bench.add_subcommand(
      "attention", "One attention layer at Wan 2.1-1.3B shapes: policies against dense");
  command->add_option("--res", args->resolution,
                      "480p, 720p, 1080p or WxH in tokens per frame (default 480p on CUDA, " +
                          std::string(kCpuDefaultResolution) + " on the CPU)");
  command->add_option("--policy", args->policies, "Comma-separated policies (dense always runs)")
      ->capture_default_str();
  auto* cast = command->add_option(
      "--cast", args->cast,
      "HeadCast cast: a JSON file {\"layers\": [[...]]}, or 'online' to classify online");
  command->add_option("--mix", args->mix, "HeadCast forced mix s,d,sp,g (default 2,2,4,4)")
      ->excludes(cast);
  command->add_option("--iters", args->iters, "Timed calls (median)")
      ->check(CLI::Range(1, 100000))
      ->capture_default_str();
  command->add_option("--warmup", args->warmup, "Untimed calls first")
      ->check(CLI::Range(0, 100000))
      ->capture_default_str();
  command->add_option("--json", args->json_path, "Also write the report as JSON to FILE");
  command->add_option("--device", args->device, "cuda or cpu (default cuda when present)")
      ->check(CLI::IsMember({"cuda", "cpu"}));
  command->add_option("--dtype", args->dtype, "bf16 or f32 (default bf16 on CUDA, f32 on CPU)")
      ->check(CLI::IsMember({"bf16", "f32"}));
  command->add_option("--heads", args->heads, "Attention heads")
      ->check(CLI::Range(1, 256))
      ->capture_default_str();
  command->add_option("--head-dim", args->head_dim, "Head dimension")
      ->check(CLI::Range(1, 512))
      ->capture_default_str();
  command->add_option("--seed", args->seed, "Seed of the random q/k/v")->capture_default_str();
  command
      ->add_option("--cell-mode", args->cell_mode,
                   "HeadCast's Spatial cells: rounded (the paper's), divisor or ragged")
      ->check(CLI::IsMember({"rounded", "divisor", "ragged"}))
      ->capture_default_str();
  command->callback([args] { run_bench_attention(*args); });
});

}  // namespace
}  // namespace wc::cli
