// `worldcast bench cross`: one cross-attention layer, dense against AnnCA on a planted prompt
// (the work is in bench/cross_bench.h; this file parses arguments).
#include <ATen/ATen.h>
#include <CLI/CLI.hpp>

#include <cstdio>
#include <memory>
#include <string>

#include "bench/attention_bench.h"
#include "bench/cross_bench.h"
#include "engine/core/atomic_file.h"
#include "engine/core/error.h"
#include "engine/core/json_text.h"
#include "ui/cli/attention_bench_options.h"
#include "ui/cli/bench.h"

namespace wc::cli {
namespace {

struct BenchCrossArgs {
  attention::CrossBenchOptions options;
  std::string resolution;  // empty: 720p on CUDA, 16x12 on the CPU
  std::string device, dtype, annca = "{}", json_path;
};

void run_bench_cross(BenchCrossArgs args) {
  attention::CrossBenchOptions& o = args.options;
  const BenchTarget target = resolve_bench_target(args.device, args.dtype);
  o.device = target.device;
  o.dtype = target.dtype;
  const std::string resolution = !args.resolution.empty()  ? args.resolution
                                 : target.device.is_cuda() ? "720p"
                                                           : "16x12";
  std::tie(o.grid_h, o.grid_w) = attention::parse_resolution(resolution);
  o.annca = parse_json(args.annca, "--annca");
  if (!o.annca.is_object()) throw Error("--annca", "expected a JSON object");
  const attention::CrossBenchResult result = attention::run_cross_bench(o);
  std::fputs(result.table(o).c_str(), stdout);
  if (!args.json_path.empty()) {
    write_file_atomically(args.json_path, result.to_json(o).dump(1) + "\n");
    std::printf("wrote %s\n", args.json_path.c_str());
  }
}

const bool kRegistered = register_bench("cross", [](CLI::App& bench) {
  auto args = std::make_shared<BenchCrossArgs>();
  auto& o = args->options;
  CLI::App* command = bench.add_subcommand(
      "cross",
      "One cross-attention layer: dense against AnnCA on a planted prompt (time, the prompt "
      "share kept, recall of each query's top tokens, output error)");
  command->add_option("--res", args->resolution,
                      "480p, 720p, 1080p or WxH tokens per frame (default 720p on CUDA, 16x12 on "
                      "the CPU)");
  command->add_option("--frames", o.frames, "Frames per block")
      ->check(CLI::Range(1, 64))
      ->capture_default_str();
  command->add_option("--heads", o.heads, "Heads")
      ->check(CLI::Range(1, 256))
      ->capture_default_str();
  command->add_option("--head-dim", o.head_dim, "Head dimension")
      ->check(CLI::Range(8, 512))
      ->capture_default_str();
  command->add_option("--prompt", o.prompt, "Prompt tokens")
      ->check(CLI::Range(1, 65536))
      ->capture_default_str();
  command->add_option("--groups", o.groups, "Planted groups of prompt tokens")
      ->check(CLI::Range(1, 4096))
      ->capture_default_str();
  command->add_option("--groups-per-frame", o.groups_per_frame, "Groups a frame's queries draw on")
      ->check(CLI::Range(1, 4096))
      ->capture_default_str();
  command->add_option("--noise", o.noise, "Spread of the planted keys and queries")
      ->check(CLI::Range(0.0, 10.0))
      ->capture_default_str();
  command->add_option("--top", o.top, "Recall of each query's top-k prompt tokens")
      ->check(CLI::Range(1, 65536))
      ->capture_default_str();
  command->add_option("--annca", args->annca,
                      "AnnCA's settings as JSON, e.g. '{\"bits\":8,\"tables\":2,\"min_kept\":16}'");
  command->add_option("--iters", o.iters, "Timed calls")
      ->check(CLI::Range(1, 100000))
      ->capture_default_str();
  command->add_option("--warmup", o.warmup, "Untimed calls first")
      ->check(CLI::Range(0, 100000))
      ->capture_default_str();
  command->add_option("--device", args->device, "cuda or cpu (default cuda when present)")
      ->check(CLI::IsMember({"cuda", "cpu"}));
  command->add_option("--dtype", args->dtype, "bf16 or f32 (default bf16 on CUDA, f32 on CPU)")
      ->check(CLI::IsMember({"bf16", "f32"}));
  command->add_option("--seed", o.seed, "Seed of the planted inputs")->capture_default_str();
  command->add_option("--json", args->json_path, "Also write the result as JSON to FILE");
  command->callback([args] { run_bench_cross(*args); });
});

}  // namespace
}  // namespace wc::cli
