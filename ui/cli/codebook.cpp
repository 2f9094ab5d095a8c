// `worldcast codebook --train-config FILE --config MODEL_CONFIG [--entries N] [--write]`: surveys
// the training data's colours and patches and stores the most common patches as a token model's
// codebook (Note [Patch tokens], engine/model/tokenizer.h). `worldcast codebook --tiles
// [--per-type N] [--frame W H] [--seed S] [--write] [--file F]`: the game's tile book instead
// (Note [Tile tokens], engine/model/tile_tokenizer.h).
#include <CLI/CLI.hpp>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "engine/core/atomic_file.h"
#include "engine/core/bounded_read.h"
#include "engine/core/error.h"
#include "engine/core/json_text.h"
#include "engine/game/world.h"
#include "engine/model/codebook.h"
#include "engine/model/model_config.h"
#include "engine/model/tile_book.h"
#include "engine/train/palette_survey.h"
#include "engine/train/patch_survey.h"
#include "engine/train/tile_survey.h"
#include "engine/train/train_config.h"
#include "ui/cli/command.h"

namespace wc::cli {
namespace {

namespace fs = std::filesystem;

struct CodebookCommandOptions {
  std::string train_config;
  std::string config;
  int batches = 64;
  int entries = 8192;
  int max_colours = model::kMaxCodebookColours;
  bool write = false;
  std::string file;  // codebook.txt beside the model config; tilebook.txt here with --tiles
  bool tiles = false;
  int per_type = 32;
  std::vector<int> frame = {128, 128};
  uint64_t seed = 1;
};

nlohmann::json read_json(const std::string& path) {
  return parse_json(read_bounded_file(path, model::kMaxModelConfigBytes, "model config"), path);
}

void run_codebook(const CodebookCommandOptions& o) {
  if (o.train_config.empty() || o.config.empty()) {
    throw Error(o.train_config.empty() ? "--train-config" : "--config",
                "is required to survey the training data's patches (or pass --tiles for the "
                "game's tile book)");
  }
  const train::TrainConfig train = train::load_train_config(o.train_config);
  if (o.entries < 1 || o.entries > model::kMaxCodebookEntries) {
    throw Error("--entries", "must be in [1, " + std::to_string(model::kMaxCodebookEntries) +
                                 "], got " + std::to_string(o.entries));
  }
  nlohmann::json json = read_json(o.config);
  const train::PaletteSurvey palette =
      train::survey_palette(train.clips, train.batch, train.seed, o.batches, o.max_colours);
  std::printf("%zu colours (%lld distinct; rms error %.3f)\n", palette.colours.size(),
              static_cast<long long>(palette.distinct), palette.rms_error);
  const int patch = json.contains("patch") && json["patch"].is_array() &&
                            json["patch"].size() == 3 && json["patch"][1].is_number_integer()
                        ? json["patch"][1].get<int>()
                        : 8;
  const train::PatchSurvey survey = train::survey_clip_patches(
      train.clips, train.batch, train.seed, o.batches, palette.colours, patch, o.entries, 1);
  std::printf(
      "%lld patches of %dx%d pixels surveyed, %lld distinct; the %zu most common cover "
      "%.3f%% of them\n",
      static_cast<long long>(survey.occurrences), patch, patch,
      static_cast<long long>(survey.distinct), survey.book.patches.size(),
      100.0 * survey.book_share);
  if (!o.write) return;
  model::Codebook book;
  book.patch = patch;
  book.colours = palette.colours;
  book.entries = survey.book.patches;
  const std::string file = o.file.empty() ? "codebook.txt" : o.file;
  const fs::path book_path = fs::path(o.config).parent_path() / file;
  model::write_codebook(book_path.string(), book);
  json["tokens"]["codebook"] = file;
  json["tokens"]["vocab"] = book.size();
  model::parse_model_config(json, o.config);  // refuses a pair that would not load
  write_file_atomically(o.config, json.dump(2) + "\n");
  std::printf("wrote %s (%d entries) and named it in %s\n", book_path.string().c_str(), book.size(),
              o.config.c_str());
}

// "26 colours; ground 176 (grass 32, ...); layers sprite 12, ...; vocab 227".
std::string tile_summary(const train::TileSurvey& survey) {
  const model::TileBook& book = survey.book;
  std::ostringstream out;
  out << "tile book of " << book.frame_width << "x" << book.frame_height << " frames, " << book.tile
      << "-pixel tiles: " << book.colours.size() << " colours; ground " << book.ground.size()
      << " (";
  for (size_t type = 0; type < survey.ground_per_type.size(); ++type) {
    out << (type ? ", " : "") << game::tile_name(static_cast<game::Tile>(type)) << ' '
        << survey.ground_per_type[type];
  }
  out << "); layers";
  for (size_t i = 0; i < book.layers.size(); ++i) {
    out << (i ? ", " : " ") << book.layers[i].name << ' ' << book.layers[i].images.size();
  }
  out << "; vocab " << book.vocab();
  return out.str();
}

void run_tile_book(const CodebookCommandOptions& o) {
  const train::TileSurvey survey =
      train::survey_tiles(o.frame.at(0), o.frame.at(1), o.per_type, o.seed);
  std::printf("%s\n", tile_summary(survey).c_str());
  if (!o.write) return;
  const std::string path = o.file.empty() ? "tilebook.txt" : o.file;
  model::write_tile_book(path, survey.book);
  std::printf("wrote %s\n", path.c_str());
}

const bool kRegistered = register_command("codebook", [](CLI::App& app) {
  auto o = std::make_shared<CodebookCommandOptions>();
  CLI::App* cmd = app.add_subcommand(
      "codebook",
      "Survey the training data's patches; --write stores the most common as a token model's "
      "codebook and names it in the model config. With --tiles: the game's tile book");
  CLI::Option* train_config = cmd->add_option("--train-config", o->train_config,
                                              "training config JSON whose clips are surveyed "
                                              "(required without --tiles)");
  CLI::Option* config =
      cmd->add_option("--config", o->config, "the token model's config JSON (without --tiles)");
  CLI::Option* batches =
      cmd->add_option("--batches", o->batches, "training batches surveyed, from the first")
          ->capture_default_str();
  CLI::Option* entries =
      cmd->add_option("--entries", o->entries, "the codebook's size, most common patches first")
          ->capture_default_str();
  CLI::Option* max_colours =
      cmd->add_option("--max-colours", o->max_colours, "colours kept (k-means beyond)")
          ->capture_default_str();
  cmd->add_flag("--write", o->write,
                "write the codebook beside the model config and name it there (with --tiles: "
                "write the tile book)");
  cmd->add_option("--file", o->file,
                  "with --write: the codebook's file name (default codebook.txt), or the tile "
                  "book's path (default tilebook.txt in the current folder)");
  CLI::Option* tiles =
      cmd->add_flag("--tiles", o->tiles,
                    "build the game's tile book (whole tiles and screen-fixed layers) instead")
          ->excludes(train_config, config, batches, entries, max_colours);
  cmd->add_option("--per-type", o->per_type, "with --tiles: textures kept per tile type")
      ->capture_default_str()
      ->needs(tiles);
  cmd->add_option("--frame", o->frame, "with --tiles: the frame's width and height")
      ->expected(2)
      ->capture_default_str()
      ->needs(tiles);
  cmd->add_option("--seed", o->seed, "with --tiles: seed of the textures' places and times")
      ->capture_default_str()
      ->needs(tiles);
  cmd->callback([o] { o->tiles ? run_tile_book(*o) : run_codebook(*o); });
});

}  // namespace
}  // namespace wc::cli
