// `worldcast bench rollout`: an attention-only rollout of thousands of blocks, every policy on the
// same synthetic keys, frame time and cache size against frames (the work is in
// bench/rollout_bench.h; this file parses arguments).
#include <ATen/ATen.h>
#include <CLI/CLI.hpp>

#include <cstdio>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "bench/rollout_bench.h"
#include "engine/core/atomic_file.h"
#include "engine/core/error.h"
#include "engine/core/json_text.h"
#include "ui/cli/attention_bench_options.h"
#include "ui/cli/bench.h"

namespace wc::cli {
namespace {

struct BenchRolloutArgs {
  attention::RolloutBenchOptions options;
  std::string resolution;  // empty: 480p on CUDA, a small grid on the CPU
  std::string policies = "dense,dense-window,headcast,tempcache,combined";
  std::string device, dtype, tempcache, ann, json_path, plot_path, mix;
  std::string replot;  // a saved --json report: rebuild its table and plot, run nothing
  std::string cuda_graphs = "on";
};

// A CPU rollout of a thousand blocks at 480p would take hours with the float32 reference.
constexpr const char* kCpuDefaultResolution = "12x8";

// --replot: the GPU machine has no gnuplot, so its JSON is plotted here.
void replot_bench_rollout(const BenchRolloutArgs& args) {
  const attention::RolloutBenchReport report = attention::load_rollout_report(args.replot);
  std::fputs(report.table().c_str(), stdout);
  if (!args.json_path.empty()) {
    write_file_atomically(args.json_path, report.to_json().dump(1) + "\n");
    std::printf("wrote %s\n", args.json_path.c_str());
  }
  if (!args.plot_path.empty()) std::printf("%s\n", report.plot(args.plot_path).c_str());
}

void run_bench_rollout(BenchRolloutArgs args) {
  if (!args.replot.empty()) {
    replot_bench_rollout(args);
    return;
  }
  attention::RolloutBenchOptions& o = args.options;
  const BenchTarget target = resolve_bench_target(args.device, args.dtype);
  o.device = target.device;
  o.dtype = target.dtype;
  o.resolution = !args.resolution.empty()  ? args.resolution
                 : target.device.is_cuda() ? "480p"
                                           : kCpuDefaultResolution;
  o.policies = split_commas(args.policies);
  o.cuda_graphs = args.cuda_graphs == "on";
  if (!args.tempcache.empty()) {
    o.tempcache = parse_json(args.tempcache, "--tempcache");
    if (!o.tempcache.is_object()) throw Error("--tempcache", "expected a JSON object");
  }
  if (!args.ann.empty()) {
    o.ann = parse_json(args.ann, "--ann");
    if (!o.ann.is_object()) throw Error("--ann", "expected a JSON object");
  }
  if (!args.mix.empty()) o.headcast_cast = parse_headcast_mix(args.mix);
  const attention::RolloutBenchReport report = attention::run_rollout_bench(o);
  std::fputs(report.table().c_str(), stdout);
  if (!args.json_path.empty()) {
    write_file_atomically(args.json_path, report.to_json().dump(1) + "\n");
    std::printf("wrote %s\n", args.json_path.c_str());
  }
  if (!args.plot_path.empty()) std::printf("%s\n", report.plot(args.plot_path).c_str());
}

const bool kRegistered = register_bench("rollout", [](CLI::App& bench) {
  auto args = std::make_shared<BenchRolloutArgs>();
  auto& o = args->options;
  CLI::App* command = bench.add_subcommand(
      "rollout",
      "Attention-only rollout of many blocks: frame time and cache size against frames for "
      "dense, dense-window, headcast, tempcache and combined (annsa and fast-ar on request)");
  command->add_option("--res", args->resolution,
                      "480p, 720p, 1080p or WxH tokens per frame (default 480p on CUDA, " +
                          std::string(kCpuDefaultResolution) + " on the CPU)");
  command->add_option("--blocks", o.blocks, "AR blocks to run (3 frames each)")
      ->check(CLI::Range(int64_t{1}, int64_t{10000000}))
      ->capture_default_str();
  command->add_option("--every", o.every, "Sample cache size every k blocks")
      ->check(CLI::Range(1, 1000000))
      ->capture_default_str();
  command
      ->add_option("--policies", args->policies,
                   "Comma-separated: dense (unbounded), dense-window, headcast, tempcache, "
                   "combined, annsa (AnnSA over the window), fast-ar (TempCache + AnnSA)")
      ->capture_default_str();
  command->add_option("--window", o.window, "Frames of dense-window and headcast")
      ->capture_default_str();
  command
      ->add_option("--budget-frames", o.budget_frames,
                   "TempCache budget per head in frames' worth of entries (tempcache, combined)")
      ->capture_default_str();
  command->add_option("--tempcache", args->tempcache,
                      "Extra JSON settings for tempcache and combined, e.g. "
                      "'{\"budget_rule\":\"merge_closest\"}'");
  command->add_option("--ann", args->ann,
                      "Extra JSON ann_* settings for annsa and fast-ar, e.g. '{\"ann_bits\":8}'");
  command->add_option("--mix", args->mix,
                      "Forced cast of headcast and combined: s,d,sp,g (default 2,2,4,4)");
  command->add_option("--layers", o.num_layers, "Attention layers")
      ->check(CLI::Range(1, 64))
      ->capture_default_str();
  command->add_option("--steps", o.steps, "Attention calls per layer and block")
      ->check(CLI::Range(1, 16))
      ->capture_default_str();
  command->add_option("--heads", o.num_heads, "Heads")
      ->check(CLI::Range(1, 256))
      ->capture_default_str();
  command->add_option("--head-dim", o.head_dim, "Head dimension")
      ->check(CLI::Range(1, 512))
      ->capture_default_str();
  command
      ->add_option("--dense-max-blocks", o.dense_max_blocks,
                   "Stop dense-unbounded after this many blocks (0 = no limit)")
      ->capture_default_str();
  command
      ->add_option("--dense-max-block-ms", o.dense_max_block_ms,
                   "Stop dense-unbounded once a block takes longer (0 = no limit)")
      ->capture_default_str();
  command
      ->add_option("--dense-max-gib", o.dense_max_gib,
                   "Stop dense-unbounded once its cache exceeds this (0 = no limit)")
      ->capture_default_str();
  command
      ->add_option("--error-every", o.error_every,
                   "Every k blocks, the output error against dense attention over the whole "
                   "uncompressed history (kept on the side: small shapes only; 0 = never)")
      ->check(CLI::Range(0, 1000000))
      ->capture_default_str();
  command->add_option("--json", args->json_path, "Write the report (with per-block times) here");
  command->add_option("--plot", args->plot_path, "Write a PNG of time and memory vs frames");
  command->add_option("--replot", args->replot,
                      "Run nothing: read a report saved with --json, print its table and plot it "
                      "with --plot (for runs made where gnuplot is missing)");
  command->add_option("--device", args->device, "cuda or cpu (default cuda when present)")
      ->check(CLI::IsMember({"cuda", "cpu"}));
  command->add_option("--dtype", args->dtype, "bf16 or f32 (default bf16 on CUDA, f32 on CPU)")
      ->check(CLI::IsMember({"bf16", "f32"}));
  command->add_option("--seed", o.seed, "Seed of the key process")->capture_default_str();
  command
      ->add_option("--cuda-graphs", args->cuda_graphs,
                   "on or off: on CUDA, replay each block from a CUDA graph once the policy "
                   "allows it (as the game does); off runs every block eagerly")
      ->check(CLI::IsMember({"on", "off"}))
      ->capture_default_str();
  command->callback([args] { run_bench_rollout(*args); });
});

}  // namespace
}  // namespace wc::cli
