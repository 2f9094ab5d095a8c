// `worldcast bench model`: DiT time per AR block (all k + 1 forwards; decode apart) for a config
// at several resolutions and attention policies in one run, printed as a table and as JSON.
#include <CLI/CLI.hpp>

#include <algorithm>
#include <cstdio>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "bench/model_bench.h"
#include "engine/core/atomic_file.h"
#include "engine/core/error.h"
#include "engine/core/json_text.h"
#include "engine/model/model_config.h"
#include "engine/rollout/kernel_trace.h"
#include "ui/cli/bench.h"

namespace wc::cli {
namespace {

struct BenchModelOptions {
  std::string config = "assets/configs/game-small.json";
  std::string device = "cpu";
  std::string dtype;  // "" = bf16 on CUDA, f32 on CPU
  std::vector<std::string> resolutions;
  std::vector<std::string> policies{"dense"};
  std::vector<std::string> settings;  // NAME=JSON overrides
  std::string cross_policy = "dense";
  std::string cross_settings = "{}";
  std::string prompt;     // safetensors file with a "prompt" tensor; "" = random
  int window_blocks = 6;  // rolling blocks next to the sink block
  int warmup = -1;        // -1: window + 2 blocks
  int blocks = 5;
  int split_blocks = -1;  // -1: blocks
  uint64_t seed = 0;
  std::string json_path;
  std::string trace_dir;
};

// "37.5%".
std::string format_share(double share) {
  char text[32];
  std::snprintf(text, sizeof(text), "%.1f%%", 100.0 * share);
  return text;
}

// HeadCast's fixed comparison cast for `heads` heads per layer, in the proportions of the
// attention benches' 12-head cast (2 Sink + 2 Dummy / 4 Spatial / 4 Global): a sixth Sink, a sixth
// Dummy (at least one each), the rest split between Spatial and Global. 4 heads: 1 / 1 / 1 / 1.
std::vector<int> comparison_mix(int heads) {
  const int sink = std::max(1, heads / 6);
  const int dummy = std::max(1, heads / 6);
  const int spatial = std::max(0, (heads - sink - dummy) / 2);
  return {sink, dummy, spatial, heads - sink - dummy - spatial};
}

// The benchmark's default settings: a sliding window of one sink block + `window_blocks`
// rolling blocks; HeadCast with the fixed cast used for comparison with Dummy Forcing.
nlohmann::json default_settings(const std::string& policy, int window_frames, int heads) {
  if (policy == "dense") return {{"window", window_frames}};
  if (policy == "headcast") {
    return {{"window", window_frames}, {"cast", {{"mix", comparison_mix(heads)}}}};
  }
  return nlohmann::json::object();
}

void run_bench_model(const BenchModelOptions& options) {
  rollout::ModelBenchOptions bench;
  bench.config = model::load_model_config(options.config);
  const model::ModelConfig& config = bench.config;
  try {
    bench.device = at::Device(options.device);
  } catch (const std::exception&) {
    throw Error("bench model", "--device: unknown device '" + options.device + "'");
  }
  const std::string dtype =
      options.dtype.empty() ? (bench.device.is_cuda() ? "bf16" : "f32") : options.dtype;
  if (dtype == "bf16") {
    bench.dtype = at::kBFloat16;
  } else if (dtype == "f16") {
    bench.dtype = at::kHalf;
  } else if (dtype == "f32") {
    bench.dtype = at::kFloat;
  } else {
    throw Error("bench model", "--dtype must be bf16, f16 or f32, got '" + dtype + "'");
  }
  bench.resolutions =
      options.resolutions.empty() ? std::vector<std::string>{""} : options.resolutions;
  const int window_frames = (1 + options.window_blocks) * config.frames_per_block;
  for (const std::string& name : options.policies) {
    bench.policies.push_back({name, default_settings(name, window_frames, config.heads)});
  }
  for (const std::string& override_text : options.settings) {
    const size_t eq = override_text.find('=');
    if (eq == std::string::npos) {
      throw Error("bench model", "--settings expects NAME=JSON, got '" + override_text + "'");
    }
    const std::string name = override_text.substr(0, eq);
    const nlohmann::json json =
        parse_json(override_text.substr(eq + 1), "bench model: --settings " + name);
    bool found = false;
    for (auto& policy : bench.policies) {
      if (policy.name != name) continue;
      // Keys given replace the bench's defaults for them; the other defaults stay.
      if (json.is_object() && policy.settings.is_object()) {
        policy.settings.update(json);
      } else {
        policy.settings = json;
      }
      found = true;
    }
    if (!found)
      throw Error("bench model", "--settings names policy '" + name + "' not in --policies");
  }
  bench.warmup_blocks = options.warmup >= 0 ? options.warmup : options.window_blocks + 3;
  bench.timed_blocks = options.blocks;
  bench.split_blocks = options.split_blocks;
  bench.trace_dir = options.trace_dir;
  if (!bench.trace_dir.empty() && !rollout::KernelTrace::available()) {
    throw Error("--trace", "this build cannot record kernel traces (needs CUDA and LibTorch 2)");
  }
  bench.seed = options.seed;
  bench.prompt_file = options.prompt;
  bench.cross_policy.name = options.cross_policy;
  bench.cross_policy.settings = parse_json(options.cross_settings, "bench model: --cross-settings");
  if (!config.cross_attention.active() &&
      (options.cross_policy != "dense" || !bench.cross_policy.settings.empty())) {
    throw Error("--cross-policy", config.file + " has no cross-attention (no \"cross_attention\")");
  }

  std::printf("bench model: %s on %s (%s), %d warm-up + %d timed blocks, %d forwards/block\n",
              config.name.c_str(), bench.device.str().c_str(), dtype.c_str(), bench.warmup_blocks,
              bench.timed_blocks, config.sampler.steps + 1);
  if (config.cross_attention.active()) {
    std::printf("cross-attention: %s over %s of %d tokens (%s)\n", bench.cross_policy.name.c_str(),
                bench.prompt_file.empty() ? "a random prompt" : bench.prompt_file.c_str(),
                config.cross_attention.tokens, bench.cross_policy.settings.dump().c_str());
  }
  std::printf(
      "| %-10s | %-9s | %7s | %10s | %10s | %10s | %9s | %8s | %11s | %10s | %10s | %11s |\n",
      "resolution", "policy", "tokens", "block ms", "p10 ms", "p90 ms", "decode ms", "FPS",
      "cache MiB", "attn ms*", "rest ms*", "prompt kept");
  std::fflush(stdout);
  const auto rows = rollout::run_model_bench(bench, [](const rollout::ModelBenchRow& row) {
    std::printf(
        "| %-10s | %-9s | %7lld | %10.2f | %10.2f | %10.2f | %9.3f | %8.2f | %11.1f | %10.2f | "
        "%10.2f | %11s |\n",
        row.resolution.c_str(), row.policy.c_str(), static_cast<long long>(row.tokens_per_block),
        row.block_ms_median, row.block_ms_p10, row.block_ms_p90, row.decode_ms_median, row.fps,
        static_cast<double>(row.cache_bytes) / (1 << 20), row.attention_ms_median,
        row.rest_ms_median, row.cross_policy.empty() ? "-" : format_share(row.prompt_kept).c_str());
    std::fflush(stdout);
  });
  std::printf(
      "* from separate blocks with the attention paths timed (gathers and scatters "
      "included); rest = projections, MLPs, norms, RoPE\n");
  if (!options.json_path.empty()) {
    write_file_atomically(options.json_path, rollout::model_bench_json(bench, rows).dump(2) + "\n");
    std::printf("wrote %s\n", options.json_path.c_str());
  }
}

const bool kRegistered = register_bench("model", [](CLI::App& bench) {
  auto options = std::make_shared<BenchModelOptions>();
  CLI::App* command = bench.add_subcommand(
      "model", "World-model DiT time per AR block (random weights) per resolution and policy");
  command->add_option("--config", options->config, "Model config JSON")->capture_default_str();
  command->add_option("--device", options->device, "cpu or cuda[:N]")->capture_default_str();
  command->add_option("--dtype", options->dtype,
                      "bf16, f16 or f32 (default: bf16 on CUDA, f32 on CPU)");
  command
      ->add_option("--resolution", options->resolutions,
                   "Named resolutions of the config (repeat or comma-separate; default: its frame)")
      ->delimiter(',');
  command->add_option("--policies", options->policies, "Attention policies (comma-separated)")
      ->delimiter(',')
      ->capture_default_str();
  command->add_option("--settings", options->settings,
                      "Override keys of a policy's settings: NAME=JSON (repeatable; other keys "
                      "keep the bench's defaults)");
  command
      ->add_option("--window-blocks", options->window_blocks,
                   "Rolling blocks next to the sink block in the window")
      ->check(CLI::Range(1, 1000))
      ->capture_default_str();
  command->add_option("--warmup", options->warmup, "Untimed blocks first (default: window + 3)");
  command->add_option("--blocks", options->blocks, "Timed blocks")
      ->check(CLI::Range(1, 100000))
      ->capture_default_str();
  command->add_option("--split-blocks", options->split_blocks,
                      "Blocks with the attention paths timed, after the timed ones (default: "
                      "--blocks)");
  command
      ->add_option("--trace", options->trace_dir,
                   "Record one further block per policy as a kernel trace in this folder "
                   "(trace_RES_POLICY.json; CUDA builds)")
      ->check(CLI::ExistingDirectory);
  command
      ->add_option("--cross-policy", options->cross_policy,
                   "A model with cross-attention: dense or annca (Note [AnnCA])")
      ->capture_default_str();
  command->add_option("--cross-settings", options->cross_settings,
                      "JSON settings of the cross-attention policy, e.g. '{\"bits\":8}'");
  command->add_option("--prompt", options->prompt,
                      "A model with cross-attention: a safetensors file whose tensor \"prompt\" "
                      "holds its [tokens, width] embeddings (default: random from --seed)");
  command->add_option("--seed", options->seed, "Weights, noise and prompt seed");
  command->add_option("--json", options->json_path, "Also write the result as JSON to FILE");
  command->callback([options] { run_bench_model(*options); });
});

}  // namespace
}  // namespace wc::cli
