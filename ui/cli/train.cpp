// `worldcast train --config FILE --out DIR`: trains (or resumes) the bundled world model on the
// reference game and exports the playable weights to DIR/model. See engine/train/trainer.h.
#include <CLI/CLI.hpp>

#include <memory>
#include <string>

#include "engine/core/error.h"
#include "engine/train/train_config.h"
#include "engine/train/trainer.h"
#include "ui/cli/command.h"

namespace wc::cli {
namespace {

struct TrainCommandOptions {
  std::string config;
  std::string out;
  std::string device = "cpu";
  double minutes = 0.0;
  int64_t max_steps = 0;
  bool fresh = false;
  std::string init;
  bool init_new_head = false;
  bool quiet = false;
  std::string trace;
};

void run_train(const TrainCommandOptions& o) {
  const train::TrainConfig config = train::load_train_config(o.config);
  train::TrainOptions options;
  options.out_dir = o.out;
  try {
    options.device = at::Device(o.device);
  } catch (const std::exception&) {
    throw Error("--device", "unknown device '" + o.device + "' (cpu, cuda, cuda:N)");
  }
  options.minutes = o.minutes;
  options.max_steps = o.max_steps;
  options.resume = !o.fresh;
  options.init_from = o.init;
  options.init_new_head = o.init_new_head;
  options.progress_bar = !o.quiet;
  options.trace_file = o.trace;
  const train::TrainReport r = train::train(config, options);
  std::printf("trained steps %lld -> %lld, %.1f min in all, loss %.5f, %.0f clips/s; model: %s\n",
              static_cast<long long>(r.first_step), static_cast<long long>(r.steps),
              r.seconds / 60.0, r.last_loss, r.clips_per_second, r.model_dir.c_str());
}

const bool kRegistered = register_command("train", [](CLI::App& app) {
  auto o = std::make_shared<TrainCommandOptions>();
  CLI::App* cmd = app.add_subcommand(
      "train", "Train (or resume) the world model on the reference game; exports OUT/model");
  cmd->add_option("--config", o->config,
                  "training config JSON (e.g. assets/train/game-tokens.json)")
      ->required();
  cmd->add_option("--out", o->out, "run folder: state/ (resumable), model/ (playable), log.jsonl")
      ->required();
  cmd->add_option("--device", o->device, "cpu, cuda or cuda:N");
  cmd->add_option("--minutes", o->minutes, "stop after this many minutes (state is saved)");
  cmd->add_option("--max-steps", o->max_steps, "stop at this step count (default: the config's)");
  cmd->add_option("--init", o->init,
                  "without a state in --out: start from this model folder's weights");
  cmd->add_flag("--new-head", o->init_new_head,
                "with --init: zero the output head (its output changed meaning, e.g. the "
                "config added the previous-frame skip)");
  cmd->add_flag("--fresh", o->fresh, "refuse to resume an existing state in --out");
  cmd->add_flag("--quiet", o->quiet, "no progress bar");
  cmd->add_option("--trace", o->trace,
                  "write a kernel trace (Chrome JSON; tools/kernel_table.py sums it) of this "
                  "call's third step: a token model on CUDA with LibTorch 2");
  cmd->callback([o] { run_train(*o); });
});

}  // namespace
}  // namespace wc::cli
