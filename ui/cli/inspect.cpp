// `worldcast inspect PATH`: what a checkpoint holds (tensors, totals, metadata, config.json),
// validated as it is read and against the config play would take (Note [Inspect checks what play
// loads]); a bad file exits non-zero with one line naming the file and tensor.
#include <CLI/CLI.hpp>

#include <cstdio>
#include <filesystem>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>

#include "engine/core/bounded_read.h"
#include "engine/core/error.h"
#include "engine/core/json_text.h"
#include "engine/core/safetensors.h"
#include "engine/model/model_config.h"
#include "engine/model/weights.h"
#include "ui/cli/command.h"
#include "ui/inference/model_source.h"

namespace wc::cli {
namespace {

namespace fs = std::filesystem;
using Json = nlohmann::json;

struct InspectOptions {
  std::string path;
  bool check_finite = false;
  bool json = false;
};

// The config.json that sits next to the weights (in the folder, or beside the file), parsed as
// every config is (Note [Checked JSON], a bounded read); null when there is none.
Json read_config(const std::string& weights_path) {
  const fs::path weights(weights_path);
  const fs::path config =
      (fs::is_directory(weights) ? weights : weights.parent_path()) / "config.json";
  if (!fs::exists(config)) return nullptr;
  const std::string file = config.string();
  return parse_json(read_bounded_file(file, model::kMaxModelConfigBytes, "model config"), file);
}

// Note [Inspect checks what play loads]: a checkpoint that `worldcast play --weights` would
// refuse (tensors, shapes or dtype its config does not describe, or a config that does not
// parse) fails inspect too, with the same error. The config is the one play would take: the
// config.json in a weights folder, else the checkpoint's metadata config; a checkpoint with
// neither is only listed.
void check_playable(const Checkpoint& checkpoint, const std::string& path) {
  const bool beside = fs::is_directory(path) && fs::exists(fs::path(path) / "config.json");
  if (!beside && checkpoint.metadata().count("config") == 0) return;
  ui::ModelSourceOptions source;
  source.weights = path;
  std::string file;
  const model::ModelConfig config = ui::model_config_for(source, &file);
  try {
    model::check_weights(checkpoint, config);
  } catch (const Error& error) {
    throw Error(std::string(error.what()) + " (against the config in " + file + ")");
  }
}

std::string with_thousands(uint64_t value) {
  std::string digits = std::to_string(value);
  for (int i = static_cast<int>(digits.size()) - 3; i > 0; i -= 3) digits.insert(i, ",");
  return digits;
}

std::string human_bytes(uint64_t bytes) {
  const char* units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  double value = static_cast<double>(bytes);
  int unit = 0;
  while (value >= 1024 && unit < 4) {
    value /= 1024;
    ++unit;
  }
  char text[32];
  std::snprintf(text, sizeof(text), unit == 0 ? "%.0f %s" : "%.1f %s", value, units[unit]);
  return text;
}

std::string file_name(const std::string& path) {
  return fs::path(path).filename().string();
}

void print_text(const Checkpoint& checkpoint, const Json& config, const InspectOptions& options) {
  std::printf("%s", checkpoint.path().c_str());
  if (!checkpoint.index_path().empty()) {
    std::printf(" (index %s, %zu shards)", file_name(checkpoint.index_path()).c_str(),
                checkpoint.files().size());
  }
  std::printf("\n\n");
  const bool sharded = checkpoint.files().size() > 1;
  size_t name_width = 4, shape_width = 5;
  for (const TensorView* tensor : checkpoint.tensors()) {
    name_width = std::max(name_width, tensor->name.size());
    shape_width = std::max(shape_width, shape_to_string(tensor->shape).size());
  }
  std::printf("  %-*s  %-5s  %-*s  %14s%s\n", static_cast<int>(name_width), "name", "dtype",
              static_cast<int>(shape_width), "shape", "bytes", sharded ? "  file" : "");
  std::map<std::string_view, std::pair<size_t, uint64_t>> by_dtype;  // tensors, bytes
  uint64_t parameters = 0;
  for (const TensorView* tensor : checkpoint.tensors()) {
    std::printf("  %-*s  %-5s  %-*s  %14s%s%s\n", static_cast<int>(name_width),
                tensor->name.c_str(), std::string(dtype_name(tensor->dtype)).c_str(),
                static_cast<int>(shape_width), shape_to_string(tensor->shape).c_str(),
                with_thousands(tensor->byte_size).c_str(), sharded ? "  " : "",
                sharded ? file_name(tensor->file).c_str() : "");
    auto& [count, bytes] = by_dtype[dtype_name(tensor->dtype)];
    ++count;
    bytes += tensor->byte_size;
    parameters += static_cast<uint64_t>(tensor->numel());
  }
  std::printf("\n%zu tensors, %s parameters, %s (%s bytes)\n", checkpoint.tensors().size(),
              with_thousands(parameters).c_str(), human_bytes(checkpoint.total_bytes()).c_str(),
              with_thousands(checkpoint.total_bytes()).c_str());
  for (const auto& [dtype, totals] : by_dtype) {
    std::printf("  %-5s %zu tensors, %s\n", std::string(dtype).c_str(), totals.first,
                human_bytes(totals.second).c_str());
  }
  if (!checkpoint.metadata().empty()) {
    std::printf("\nmetadata:\n");
    for (const auto& [key, value] : checkpoint.metadata()) {
      std::printf("  %s = %s\n", key.c_str(), value.c_str());
    }
  }
  if (!config.is_null()) std::printf("\nconfig.json:\n%s\n", config.dump(2).c_str());
  if (options.check_finite) std::printf("\nall floating-point values are finite\n");
}

Json to_json(const Checkpoint& checkpoint, const Json& config, const InspectOptions& options) {
  Json out = {
      {"path", checkpoint.path()},
      {"index", checkpoint.index_path().empty() ? Json(nullptr) : Json(checkpoint.index_path())},
      {"total_bytes", checkpoint.total_bytes()},
      {"metadata", checkpoint.metadata()},
      {"config", config}};
  Json files = Json::array();
  for (const SafetensorsFile& file : checkpoint.files()) {
    files.push_back(
        {{"path", file.path()}, {"size", file.file_size()}, {"tensors", file.tensors().size()}});
  }
  out["files"] = files;
  Json tensors = Json::array();
  uint64_t parameters = 0;
  for (const TensorView* tensor : checkpoint.tensors()) {
    tensors.push_back({{"name", tensor->name},
                       {"dtype", dtype_name(tensor->dtype)},
                       {"shape", tensor->shape},
                       {"bytes", tensor->byte_size},
                       {"file", tensor->file}});
    parameters += static_cast<uint64_t>(tensor->numel());
  }
  out["tensors"] = tensors;
  out["total_parameters"] = parameters;
  if (options.check_finite) out["finite"] = true;
  return out;
}

void run_inspect(const InspectOptions& options) {
  const Checkpoint checkpoint = Checkpoint::open(options.path);
  const Json config = read_config(options.path);
  check_playable(checkpoint, options.path);
  // A non-finite value fails the command (exit 1) before anything is printed.
  if (options.check_finite) check_finite(checkpoint);
  if (options.json) {
    std::printf("%s\n", to_json(checkpoint, config, options).dump(2).c_str());
  } else {
    print_text(checkpoint, config, options);
  }
}

const bool kRegistered = register_command("inspect", [](CLI::App& app) {
  auto options = std::make_shared<InspectOptions>();
  CLI::App* cmd = app.add_subcommand(
      "inspect", "List a checkpoint's tensors, totals, metadata and config.json, validating it");
  cmd->add_option("path", options->path, "a .safetensors file, an index, or a checkpoint folder")
      ->required();
  cmd->add_flag("--check-finite", options->check_finite,
                "fail on the first NaN or infinity (names file, tensor and index)");
  cmd->add_flag("--json", options->json, "print JSON instead of a table");
  cmd->callback([options] { run_inspect(*options); });
});

}  // namespace
}  // namespace wc::cli
