// `worldcast eval`: the metrics of DESIGN.md §13 for a trained world model on held-out seeds
// (responsiveness, idle fidelity, memory, stability, policies vs dense, speed, world content),
// printed as a table and written as JSON. The work is in engine/eval (run_eval); this file
// parses and prints.
#include <torch/cuda.h>
#include <CLI/CLI.hpp>

#include <cstdio>
#include <filesystem>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "engine/core/atomic_file.h"
#include "engine/core/error.h"
#include "engine/core/json_text.h"
#include "engine/core/safetensors.h"
#include "engine/core/timing.h"
#include "engine/eval/eval_report.h"
#include "engine/eval/game_as_model.h"
#include "engine/eval/run_eval.h"
#include "engine/model/model_config.h"
#include "ui/cli/command.h"
#include "ui/frames/screenshot.h"
#include "ui/inference/model_source.h"

namespace wc::cli {
namespace {

namespace fs = std::filesystem;

struct EvalCliOptions {
  std::string weights;
  std::string policy;  // empty: the model config's default_policy
  bool random_weights = false;
  std::string source = "model";
  std::string config;
  std::string device = "auto";
  std::string dtype;
  std::string cuda_graphs = "on";
  int seeds = 8;
  uint64_t seed_start = 1000000;
  std::string metrics = "all";
  std::vector<std::string> settings;  // NAME=JSON
  std::string json_path;
  std::string frames_dir;
  bool strict = false;
  bool quiet = false;
  eval::EvalOptions eval;  // counts and policies are bound straight to it
};

// The model config: --config; else the config.json next to the weights (in the folder, or beside
// a file); else the config the checkpoint carries in its metadata (save_weights writes it).
model::ModelConfig resolve_config(const EvalCliOptions& options, bool game) {
  if (!options.config.empty()) {
    if (!fs::exists(options.config)) throw Error(options.config, "model config not found");
    return model::load_model_config(options.config);
  }
  if (options.random_weights || game) return model::load_model_config(ui::kDefaultModelConfig);
  const fs::path weights(options.weights);
  const fs::path beside =
      (fs::is_directory(weights) ? weights : weights.parent_path()) / "config.json";
  if (fs::exists(beside)) return model::load_model_config(beside.string());
  const Checkpoint checkpoint = Checkpoint::open(options.weights);
  const auto found = checkpoint.metadata().find("config");
  if (found == checkpoint.metadata().end()) {
    throw Error(beside.string(),
                "model config not found, and the checkpoint's metadata has no 'config' (pass "
                "--config FILE)");
  }
  const std::string where = checkpoint.path() + ": metadata 'config'";
  return model::parse_checkpoint_config(parse_json(found->second, where), where, options.weights);
}

at::ScalarType parse_dtype(const std::string& name) {
  if (name == "bf16") return at::kBFloat16;
  if (name == "f16") return at::kHalf;
  if (name == "f32") return at::kFloat;
  throw Error("eval", "--dtype must be bf16, f16 or f32, got '" + name + "'");
}

void run_eval_command(EvalCliOptions& options) {
  eval::EvalOptions& eval = options.eval;
  if (options.source != "model" && options.source != "game") {
    throw Error("eval", "--source must be model or game, got '" + options.source + "'");
  }
  const bool game = options.source == "game";
  if (!game && options.random_weights && !options.weights.empty()) {
    throw Error("eval", "give --weights DIR or --random-weights, not both");
  }
  if (!game && !options.random_weights && options.weights.empty()) {
    if (!fs::exists(ui::kBundledModelDir)) {
      throw Error("eval", std::string("no --weights given and no bundled model at ") +
                              ui::kBundledModelDir + " (or pass --random-weights)");
    }
    options.weights = ui::kBundledModelDir;
  }
  if (!game && !options.random_weights && !fs::exists(options.weights)) {
    throw Error(options.weights, "weights not found (expected a checkpoint folder or file)");
  }
  eval.config = resolve_config(options, game);
  eval.policy = options.policy.empty() ? eval.config.default_policy : options.policy;
  if (!game) {
  }
  eval.weights = game ? "" : options.weights;
  if (game) {
    // The reference game as the model: the ceiling of every metric (and a harness check).
    const model::FrameSize frame = eval.config.frame;
    const int seed_frames = eval.seed_frames;
    eval.source_name = "game";
    eval.make_source = [frame, seed_frames](const std::string&, uint64_t seed) {
      return eval::make_game_as_model(frame.width, frame.height, seed_frames, seed);
    };
  }
  try {
    eval.device = options.device == "auto"
                      ? at::Device(torch::cuda::is_available() ? at::kCUDA : at::kCPU)
                      : at::Device(options.device);
  } catch (const std::exception&) {
    throw Error("eval", "--device: unknown device '" + options.device + "'");
  }
  if (eval.device.is_cuda() && !torch::cuda::is_available()) {
    throw Error("eval", "--device " + options.device + ": CUDA is not available here");
  }
  if (!options.dtype.empty()) eval.dtype = parse_dtype(options.dtype);
  eval.cuda_graphs = options.cuda_graphs == "on";
  if (options.seeds < 1) throw Error("eval", "--seeds must be at least 1");
  eval.seeds.clear();
  for (int i = 0; i < options.seeds; ++i) eval.seeds.push_back(options.seed_start + i);
  eval.metrics = eval::parse_metrics(options.metrics);
  for (const std::string& text : options.settings) {
    const size_t eq = text.find('=');
    if (eq == std::string::npos || eq == 0) {
      throw Error("eval", "--settings expects NAME=JSON, got '" + text + "'");
    }
    const std::string name = text.substr(0, eq);
    eval.settings[name] = parse_json(text.substr(eq + 1), "eval: --settings " + name);
    if (!eval.settings[name].is_object()) {
      throw Error("eval", "--settings " + name + ": must be a JSON object");
    }
  }
  if (!options.quiet) {
    auto clock = std::make_shared<Stopwatch>();
    eval.progress = [clock](const std::string& line) {
      std::fprintf(stderr, "[%7.1f s] %s\n", clock->elapsed_ms() / 1000.0, line.c_str());
    };
  }
  if (!options.frames_dir.empty()) {
    fs::create_directories(options.frames_dir);
    eval.keep_frame = [dir = options.frames_dir](const std::string& name, const at::Tensor& frame) {
      const at::Tensor rgba = frame.contiguous();
      ui::write_png((fs::path(dir) / (name + ".png")).string(), static_cast<int>(rgba.size(1)),
                    static_cast<int>(rgba.size(0)), rgba.data_ptr<uint8_t>());
    };
  }
  const nlohmann::json report = eval::run_eval(eval);
  std::printf("%s", eval::format_eval_report(report).c_str());
  if (!options.json_path.empty()) {
    write_file_atomically(options.json_path, report.dump(2) + "\n");
    std::printf("wrote %s\n", options.json_path.c_str());
  }
  if (options.strict) {
    for (const auto& check : report["checks"]) {
      if (!check.value("pass", false)) set_exit_code(1);
    }
  }
}

const bool kRegistered = register_command("eval", [](CLI::App& app) {
  auto options = std::make_shared<EvalCliOptions>();
  eval::EvalOptions& e = options->eval;
  CLI::App* cmd = app.add_subcommand(
      "eval",
      "Measure a world model on held-out seeds: responsiveness, idle fidelity, memory, "
      "stability, policies vs dense, speed, world content (table + JSON)");
  cmd->add_option("--weights", options->weights,
                  "Checkpoint folder (safetensors shards + config.json) or file (default: the "
                  "bundled assets/models/game-tokens)");
  cmd->add_flag(
      "--random-weights", options->random_weights,
      "Random weights instead (tool checks; default config assets/configs/game-small.json)");
  cmd->add_option("--source", options->source,
                  "model, or game: the reference game itself (the ceiling of every metric)")
      ->capture_default_str();
  cmd->add_option("--config", options->config,
                  "Model config JSON (default: config.json next to the weights, else the "
                  "checkpoint's metadata)");
  cmd->add_option("--device", options->device, "auto (CUDA when available), cpu or cuda[:N]")
      ->capture_default_str();
  cmd->add_option("--dtype", options->dtype,
                  "bf16, f16 or f32 (default: bf16 on CUDA, f32 on CPU)");
  cmd->add_option("--cuda-graphs", options->cuda_graphs,
                  "on or off: replay each block's denoising forwards from a CUDA graph once the "
                  "policy allows it (CUDA only)")
      ->check(CLI::IsMember({"on", "off"}))
      ->capture_default_str();
  cmd->add_option("--seeds", options->seeds, "Number of held-out world seeds")
      ->capture_default_str();
  cmd->add_option("--seed-start", options->seed_start, "First held-out seed")
      ->capture_default_str();
  cmd->add_option("--seed-frames", e.seed_frames, "Real game frames the model is seeded with")
      ->capture_default_str();
  cmd->add_option("--metrics", options->metrics,
                  "all, or a comma list of responsiveness,idle,memory,stability,policies,speed,"
                  "world")
      ->capture_default_str();
  cmd->add_option("--policy", options->policy,
                  "Policy of the responsiveness, idle, memory, stability and world runs (default: "
                  "the model config's default_policy, else dense)");
  cmd->add_option("--policies", e.policies, "Policies compared with dense (comma-separated)")
      ->delimiter(',')
      ->capture_default_str();
  cmd->add_option("--settings", options->settings,
                  "A policy's settings over the eval defaults: NAME=JSON (repeatable)");
  cmd->add_option("--window", e.window,
                  "Attention window in frames for dense/headcast/tempcache/combined (-1: default, "
                  "0: unbounded)")
      ->capture_default_str();
  cmd->add_option("--responsiveness-frames", e.responsiveness_frames, "Frames per seed")
      ->capture_default_str();
  cmd->add_option("--idle-frames", e.idle_frames, "Idle frames per seed")->capture_default_str();
  cmd->add_option("--memory-steps", e.memory_steps,
                  "Frames walked each way (0: the longest trip the window holds)")
      ->capture_default_str();
  cmd->add_option("--stability-frames", e.stability_frames, "Frames of the long rollout")
      ->capture_default_str();
  cmd->add_option("--stability-probe", e.stability_probe_frames,
                  "Idle frames probed at its start and end")
      ->capture_default_str();
  cmd->add_option("--policy-frames", e.policy_frames, "Frames per seed and policy")
      ->capture_default_str();
  cmd->add_option("--policy-skip", e.policy_skip,
                  "Frames left out of the policy comparison (-1: window + one block)")
      ->capture_default_str();
  cmd->add_option("--speed-frames", e.speed_frames, "Timed frames per policy")
      ->capture_default_str();
  cmd->add_option("--speed-warmup", e.speed_warmup, "Untimed frames first (-1: window + 2 blocks)")
      ->capture_default_str();
  cmd->add_option("--world-frames", e.world_frames,
                  "Frames of each seed's world-content walk (terrain mix and structure from frame "
                  "200 on, per 1000-frame segment)")
      ->capture_default_str();
  cmd->add_option("--world-trip-steps", e.world_trip_steps,
                  "Frames out and back of the world metric's return trip in tokens")
      ->capture_default_str();
  cmd->add_option("--max-shift", e.max_shift, "Phase-correlation search radius (pixels)")
      ->capture_default_str();
  cmd->add_option("--json", options->json_path, "Write the report as JSON to FILE");
  cmd->add_option("--frames-dir", options->frames_dir,
                  "Write the stability probes and the rollout at each tenth (generated and "
                  "true frames), and the world walk's grid (model above game, every 100 frames) "
                  "as PNG into DIR");
  cmd->add_flag("--strict", options->strict, "Exit 1 when a check misses its target");
  cmd->add_flag("--quiet", options->quiet, "No progress lines on stderr");
  cmd->callback([options] { run_eval_command(*options); });
});

}  // namespace
}  // namespace wc::cli
