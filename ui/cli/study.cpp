// `worldcast study NAME`: HeadCast's experiments on a trained model, each a markdown table, JSON
// and a PNG in a folder. cast-stability: engine/eval/cast_stability.h; thresholds:
// engine/eval/threshold_study.h; archetypes: engine/eval/archetype_study.h; timestep:
// engine/eval/timestep_study.h; overhead: engine/eval/overhead_study.h. This file parses, runs and
// writes.
#include <torch/cuda.h>

#include <CLI/CLI.hpp>
#include <cstdio>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "engine/core/atomic_file.h"
#include "engine/core/error.h"
#include "engine/core/json_text.h"
#include "engine/core/timing.h"
#include "engine/eval/archetype_study.h"
#include "engine/eval/cast_stability.h"
#include "engine/eval/overhead_study.h"
#include "engine/eval/threshold_study.h"
#include "engine/eval/timestep_study.h"
#include "engine/model/model_config.h"
#include "ui/cli/command.h"
#include "ui/inference/model_source.h"

namespace wc::cli {
namespace {

namespace fs = std::filesystem;

struct StudyCliOptions {
  std::string name;
  std::string weights;
  bool random_weights = false;
  std::string config;
  std::string device = "cpu";
  int seeds = 3;
  uint64_t seed_start = 1000000;
  int64_t window = -1;
  std::string settings;  // headcast settings JSON over the model's
  std::vector<int64_t> blocks;
  std::vector<int> steps{0};
  int walks = 2;
  std::vector<double> thetas{0.9, 0.95, 0.98};
  std::vector<double> theta_scs{0.7, 0.755, 0.8};
  int frames = 32;
  std::vector<std::string> resolutions{""};
  std::vector<int64_t> rollout_frames{100, 1000, 10000};
  int warmup = 9;
  int timed = 5;
  std::string out;
  bool quiet = false;
};

eval::EvalOptions eval_options(StudyCliOptions& options) {
  eval::EvalOptions eval;
  if (options.random_weights && !options.weights.empty()) {
    throw Error("study", "give --weights DIR or --random-weights, not both");
  }
  if (!options.random_weights && options.weights.empty()) options.weights = ui::kBundledModelDir;
  if (!options.random_weights && !fs::is_directory(options.weights)) {
    throw Error(options.weights, "weights not found (expected a checkpoint folder)");
  }
  std::string config = options.config;
  if (config.empty()) {
    config = options.random_weights ? std::string(ui::kDefaultModelConfig)
                                    : (fs::path(options.weights) / "config.json").string();
  }
  if (!fs::exists(config)) throw Error(config, "model config not found (pass --config FILE)");
  eval.config = model::load_model_config(config);
  eval.weights = options.random_weights ? "" : options.weights;
  try {
    eval.device = at::Device(options.device);
  } catch (const std::exception&) {
    throw Error("study", "--device: unknown device '" + options.device + "'");
  }
  if (eval.device.is_cuda() && !torch::cuda::is_available()) {
    throw Error("study", "--device " + options.device + ": CUDA is not available here");
  }
  if (options.seeds < 1) throw Error("study", "--seeds must be at least 1");
  for (int i = 0; i < options.seeds; ++i) eval.seeds.push_back(options.seed_start + i);
  eval.window = options.window;
  if (!options.settings.empty()) {
    const nlohmann::json settings = parse_json(options.settings, "study: --settings");
    if (!settings.is_object()) throw Error("study", "--settings: must be a JSON object");
    eval.settings["headcast"] = settings;
  }
  if (!options.quiet) {
    auto clock = std::make_shared<Stopwatch>();
    eval.progress = [clock](const std::string& line) {
      std::fprintf(stderr, "[%7.1f s] %s\n", clock->elapsed_ms() / 1000.0, line.c_str());
    };
  }
  return eval;
}

// Validates the eval and the study (every refusal before the first run), runs it, and writes its
// table, JSON and plot as STEM.md, STEM.json and STEM.png into --out.
template <typename Study, typename Run>
void run_and_write(StudyCliOptions& options, const Study& study, const Run& run,
                   const std::string& stem) {
  const eval::EvalOptions eval = eval_options(options);
  eval::validate(eval);
  eval::validate(study, eval);
  fs::create_directories(options.out);
  const auto result = run(eval, study);
  const fs::path out(options.out);
  const std::string table = result.markdown();
  write_file_atomically((out / (stem + ".md")).string(), table);
  write_file_atomically((out / (stem + ".json")).string(), result.to_json().dump(1) + "\n");
  std::printf("%s\n%s\n", table.c_str(), result.plot((out / (stem + ".png")).string()).c_str());
}

void run_study(StudyCliOptions& options) {
  if (options.name == "thresholds") {
    eval::ThresholdStudyOptions study;
    study.thetas = options.thetas;
    study.theta_scs = options.theta_scs;
    study.frames = options.frames;
    return run_and_write(options, study, eval::run_threshold_study, "thresholds");
  }
  if (options.name == "archetypes") {
    eval::ArchetypeStudyOptions study;
    study.frames = options.frames;
    return run_and_write(options, study, eval::run_archetype_study, "archetypes");
  }
  if (options.name == "overhead") {
    eval::OverheadStudyOptions study;
    study.resolutions = options.resolutions;
    study.rollout_frames = options.rollout_frames;
    study.warmup_blocks = options.warmup;
    study.timed_blocks = options.timed;
    return run_and_write(options, study, eval::run_overhead_study, "overhead");
  }
  if (options.name == "timestep") {
    eval::TimestepStudyOptions study;
    study.frames = options.frames;
    return run_and_write(options, study, eval::run_timestep_study, "timestep");
  }
  if (options.name != "cast-stability") {
    throw Error("study",
                "unknown study '" + options.name +
                    "' (known: archetypes, cast-stability, overhead, thresholds, timestep)");
  }
  eval::CastStudyOptions study;
  study.classify_blocks = options.blocks;
  study.classify_steps = options.steps;
  study.walks = options.walks;
  run_and_write(options, study, eval::run_cast_stability, "cast_stability");
}

const bool kRegistered = register_command("study", [](CLI::App& app) {
  auto options = std::make_shared<StudyCliOptions>();
  CLI::App* cmd = app.add_subcommand(
      "study", "HeadCast's experiments on a trained model: a markdown table, JSON and a PNG");
  cmd->add_option("name", options->name,
                  "archetypes, cast-stability, overhead, thresholds or timestep")
      ->required();
  cmd->add_option("--out", options->out, "Folder for the table, JSON and plot")->required();
  cmd->add_option("--weights", options->weights,
                  "Checkpoint folder with its config.json (default: the bundled model)");
  cmd->add_flag("--random-weights", options->random_weights,
                "Random weights instead (tool checks; default config game-small)");
  cmd->add_option("--config", options->config, "Model config JSON (default: the weights')");
  cmd->add_option("--device", options->device, "cpu or cuda[:N]")->capture_default_str();
  cmd->add_option("--seeds", options->seeds, "Held-out world seeds")->capture_default_str();
  cmd->add_option("--seed-start", options->seed_start, "First held-out seed")
      ->capture_default_str();
  cmd->add_option("--window", options->window, "Attention window in frames (-1: the default)")
      ->capture_default_str();
  cmd->add_option("--settings", options->settings,
                  "HeadCast settings as a JSON object over the model's");
  cmd->add_option("--blocks", options->blocks,
                  "Classification blocks, the first the reference (default: the window's first "
                  "full block)")
      ->delimiter(',');
  cmd->add_option("--steps", options->steps,
                  "Denoising steps to classify at, the first the reference")
      ->delimiter(',')
      ->capture_default_str();
  cmd->add_option("--walks", options->walks, "Walks per seed (cast-stability)")
      ->capture_default_str();
  cmd->add_option("--thetas", options->thetas,
                  "thresholds: theta values (theta_dummy = theta_sink = theta_spatial)")
      ->delimiter(',')
      ->capture_default_str();
  cmd->add_option("--theta-scs", options->theta_scs, "thresholds: theta_spatial_score values")
      ->delimiter(',')
      ->capture_default_str();
  cmd->add_option(
         "--frames", options->frames,
         "thresholds, archetypes, timestep: frames scored per run after the window's first full "
         "block")
      ->capture_default_str();
  cmd->add_option("--resolutions", options->resolutions,
                  "overhead: the config's resolutions (\"\" or none: its default frame)")
      ->delimiter(',');
  cmd->add_option("--rollout-frames", options->rollout_frames,
                  "overhead: rollout lengths the classification's share is reported for")
      ->delimiter(',')
      ->capture_default_str();
  cmd->add_option("--warmup", options->warmup, "overhead: warm-up blocks (they hold the cast)")
      ->capture_default_str();
  cmd->add_option("--timed", options->timed, "overhead: timed blocks after the warm-up")
      ->capture_default_str();
  cmd->add_flag("--quiet", options->quiet, "No progress lines on stderr");
  cmd->callback([options] { run_study(*options); });
});

}  // namespace
}  // namespace wc::cli
