// `worldcast patches --train-config FILE --config MODEL_CONFIG [--write]`: surveys the patches of
// the training data and stores them as the model config's patch book for Note [Patch snap]
// (engine/model/patch_snap.h).
#include <CLI/CLI.hpp>

#include <cstdio>
#include <filesystem>
#include <memory>
#include <string>

#include "engine/core/atomic_file.h"
#include "engine/core/error.h"
#include "engine/model/model_config.h"
#include "engine/model/patch_book.h"
#include "engine/train/patch_survey.h"
#include "engine/train/train_config.h"
#include "ui/cli/command.h"

namespace wc::cli {
namespace {

namespace fs = std::filesystem;

struct PatchesCommandOptions {
  std::string train_config;
  std::string config;
  int batches = 64;
  int size = 8;
  int max_patches = 4096;
  int min_count = 1;
  model::PatchSnapLimits limits;
  bool write = false;
  std::string book = "patches.txt";
  std::string snap = "on";
};

void print_survey(const train::PatchSurvey& survey) {
  const model::PatchBook& book = survey.book;
  std::printf("%lld patches of %dx%d pixels surveyed, %lld distinct\n",
              static_cast<long long>(survey.occurrences), book.size, book.size,
              static_cast<long long>(survey.distinct));
  std::printf("book of %zu patches (%lld bound to screen-fixed cells) covers %.2f%% of them\n",
              book.patches.size(), static_cast<long long>(survey.bound_patches),
              100.0 * survey.book_share);
  std::printf("screen-fixed cells (row.column):");
  for (int cell : survey.fixed_cells) {
    std::printf(" %d.%d", cell / book.grid_w(), cell % book.grid_w());
  }
  std::printf("\npixels not exactly a palette colour: %.4f%%\n", 100.0 * survey.unmatched_pixels);
}

// Writes the book beside the model config, then points the config at it (each written
// atomically and validated by reading it back, so a failure leaves a usable pair).
void write_book(const PatchesCommandOptions& o, model::ModelConfig config,
                const train::PatchSurvey& survey) {
  const fs::path book_path = fs::path(o.config).parent_path() / o.book;
  model::write_patch_book(book_path.string(), survey.book);
  config.patch_snap.file = o.book;
  config.patch_snap.limits = o.limits;
  config.patch_snap.snap = o.snap == "on";
  config.patch_snap.book = std::make_shared<const model::PatchBook>(survey.book);
  const nlohmann::json json = model::model_config_to_json(config);
  model::parse_model_config(json, o.config);
  write_file_atomically(o.config, json.dump(2) + "\n");
  std::printf(
      "wrote %s and its patch_snap (max_changed %d, fixed_max_changed %d, hold %d, fixed_hold "
      "%d, snap %s) into %s\n",
      book_path.string().c_str(), o.limits.max_changed, o.limits.fixed_max_changed, o.limits.hold,
      o.limits.fixed_hold, o.snap.c_str(), o.config.c_str());
}

void run_patches(const PatchesCommandOptions& o) {
  const train::TrainConfig train = train::load_train_config(o.train_config);
  const model::ModelConfig config = model::load_model_config(o.config);
  if (config.palette.colours.empty()) {
    throw Error(o.config,
                "has no palette; the patch book is of its colours (survey them first: "
                "worldcast palette --write)");
  }
  const train::PatchSurvey survey =
      train::survey_clip_patches(train.clips, train.batch, train.seed, o.batches,
                                 config.palette.colours, o.size, o.max_patches, o.min_count);
  print_survey(survey);
  if (o.write) write_book(o, config, survey);
}

const bool kRegistered = register_command("patches", [](CLI::App& app) {
  auto o = std::make_shared<PatchesCommandOptions>();
  CLI::App* cmd = app.add_subcommand(
      "patches",
      "Survey the training data's patches in a model's palette; --write stores them as its "
      "patch book so play snaps generated patches to them");
  cmd->add_option(
         "--train-config", o->train_config,
         "training config JSON whose clips are surveyed (e.g. assets/train/game-small-moves.json)")
      ->required();
  cmd->add_option("--config", o->config, "model config JSON whose palette the patches are in")
      ->required();
  cmd->add_option("--batches", o->batches, "training batches surveyed, from the first")
      ->capture_default_str();
  cmd->add_option("--size", o->size, "a patch's side in pixels (the grid from the top-left)")
      ->capture_default_str();
  cmd->add_option("--max-patches", o->max_patches, "the book's size limit, most common first")
      ->capture_default_str();
  cmd->add_option("--min-count", o->min_count, "a patch seen fewer times is left out")
      ->capture_default_str();
  cmd->add_option("--max-changed", o->limits.max_changed,
                  "with --write: the most pixels a snap may change in one patch")
      ->capture_default_str();
  cmd->add_option("--fixed-max-changed", o->limits.fixed_max_changed,
                  "with --write: the same in a screen-fixed cell (the sprite's, the HUD's)")
      ->capture_default_str();
  cmd->add_option("--hold", o->limits.hold,
                  "with --write: a world cell keeps the previous frame's patch against a drawn "
                  "patch that is no book patch and this close to it")
      ->capture_default_str();
  cmd->add_option("--fixed-hold", o->limits.fixed_hold,
                  "with --write: a screen-fixed cell keeps the previous frame's patch while it is "
                  "within this many pixels of the nearest (0: off)")
      ->capture_default_str();
  cmd->add_flag("--write", o->write,
                "write the book beside the model config and name it in the config");
  cmd->add_option("--book", o->book, "with --write: the book's file name, beside the config")
      ->capture_default_str();
  cmd->add_option("--snap", o->snap, "with --write: whether play snaps (on) or not (off)")
      ->check(CLI::IsMember({"on", "off"}))
      ->capture_default_str();
  cmd->callback([o] { run_patches(*o); });
});

}  // namespace
}  // namespace wc::cli
