// `worldcast palette --train-config FILE [--write MODEL_CONFIG]`: surveys the colours of the
// training data and stores them in a model config for Note [Palette snap] (engine/model/palette.h).
#include <CLI/CLI.hpp>

#include <cstdio>
#include <memory>
#include <string>

#include "engine/core/atomic_file.h"
#include "engine/core/error.h"
#include "engine/model/model_config.h"
#include "engine/train/palette_survey.h"
#include "engine/train/train_config.h"
#include "ui/cli/command.h"

namespace wc::cli {
namespace {

struct PaletteCommandOptions {
  std::string train_config;
  int batches = 4;
  int max_colours = 64;
  std::string write;
  std::string snap = "on";
};

void print_survey(const train::PaletteSurvey& survey) {
  std::printf("%-4s %-8s %-15s %s\n", "#", "colour", "rgb", "share");
  for (size_t i = 0; i < survey.colours.size(); ++i) {
    const train::Rgb& c = survey.colours[i];
    std::printf("%-4zu #%02x%02x%02x  %3d %3d %3d     %6.3f%%\n", i, c[0], c[1], c[2], c[0], c[1],
                c[2], 100.0 * survey.shares[i]);
  }
  std::printf("%lld pixels, %lld distinct colours, palette of %zu, rms error %.2f (bytes)\n",
              static_cast<long long>(survey.pixels), static_cast<long long>(survey.distinct),
              survey.colours.size(), survey.rms_error);
}

// Replaces the palette of the model config at `path` (validated before and after; written
// atomically, so a failure leaves the file as it was).
void write_palette(const std::string& path, const train::PaletteSurvey& survey, bool snap) {
  model::ModelConfig config = model::load_model_config(path);
  config.palette.colours = survey.colours;
  config.palette.snap = snap;
  const nlohmann::json json = model::model_config_to_json(config);
  model::parse_model_config(json, path);
  write_file_atomically(path, json.dump(2) + "\n");
  std::printf("wrote the palette (%zu colours, snap %s) into %s\n", survey.colours.size(),
              snap ? "on" : "off", path.c_str());
}

void run_palette(const PaletteCommandOptions& o) {
  const train::TrainConfig config = train::load_train_config(o.train_config);
  const train::PaletteSurvey survey =
      train::survey_palette(config.clips, config.batch, config.seed, o.batches, o.max_colours);
  print_survey(survey);
  if (!o.write.empty()) write_palette(o.write, survey, o.snap == "on");
}

const bool kRegistered = register_command("palette", [](CLI::App& app) {
  auto o = std::make_shared<PaletteCommandOptions>();
  CLI::App* cmd = app.add_subcommand(
      "palette",
      "Survey the training data's colours; --write stores them in a model config so "
      "play snaps generated frames to them");
  cmd->add_option(
         "--train-config", o->train_config,
         "training config JSON whose clips are surveyed (e.g. assets/train/game-small.json)")
      ->required();
  cmd->add_option("--batches", o->batches, "training batches surveyed, from the first")
      ->capture_default_str();
  cmd->add_option("--max-colours", o->max_colours,
                  "the palette's size limit; more distinct colours are clustered (k-means)")
      ->capture_default_str();
  cmd->add_option("--write", o->write, "model config JSON whose \"palette\" is replaced");
  cmd->add_option("--snap", o->snap, "with --write: whether play snaps (on) or not (off)")
      ->check(CLI::IsMember({"on", "off"}))
      ->capture_default_str();
  cmd->callback([o] { run_palette(*o); });
});

}  // namespace
}  // namespace wc::cli
