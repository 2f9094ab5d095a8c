// See train_state.h.
#include <ATen/core/grad_mode.h>

#include "engine/train/train_state.h"

#include <ftw.h>
#include <sys/stat.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>

#include "engine/core/error.h"
#include "engine/core/log.h"
#include "engine/core/safetensors_torch.h"
#include "engine/model/model_config.h"
#include "engine/model/weights.h"

namespace wc::train {
namespace {

namespace fs = std::filesystem;

constexpr const char* kStatePrefix = "state";

std::vector<std::string> parameter_names(const model::CausalDiTImpl& model) {
  std::vector<std::string> names;
  for (const auto& item : model.named_parameters(/*recurse=*/true)) names.push_back(item.key());
  return names;
}

}  // namespace

// Note [Directory replacement without std::filesystem]
// On the GPU machine, a training process died with SIGSEGV right after replacing a non-empty
// folder through std::filesystem::remove_all (its binary is built by g++ 13 against a runtime
// whose libstdc++ may differ), taking the only copy of the state with it. Folder removal and
// renames here use plain POSIX calls instead, and the old folder is removed only after the new
// one is in place.
namespace {

int remove_entry(const char* path, const struct stat*, int, struct FTW*) {
  return ::remove(path);
}

void remove_tree(const std::string& path) {
  struct stat info;
  if (::lstat(path.c_str(), &info) != 0) return;
  if (::nftw(path.c_str(), remove_entry, 16, FTW_DEPTH | FTW_PHYS) != 0) {
    throw Error(path, std::string("cannot remove: ") + std::strerror(errno));
  }
}

void rename_path(const std::string& from, const std::string& to) {
  if (::rename(from.c_str(), to.c_str()) != 0) {
    throw Error(from, "cannot rename to " + to + ": " + std::strerror(errno));
  }
}

}  // namespace

// Note [Interrupted replacement]
// replace_directory(D) writes D.tmp whole (step 1), renames D to D.old (2), renames D.tmp to D
// (3) and removes D.old (4). A process killed anywhere leaves one of three layouts:
// - D present: before step 2 or after step 3. D is complete; a D.tmp (maybe half-written) or a
//   D.old (maybe half-removed) beside it is a leftover and is removed.
// - D absent, D.old present: between steps 2 and 3. D.tmp was finished before step 2 began, so
//   it is the newest complete contents and becomes D.
// - D absent, no D.old: the first write never got in place (or nothing was ever written); a
//   D.tmp is that first write, maybe partial, and is removed: nothing that was in place is lost.
// Without this, a training run killed between steps 2 and 3 restarted at step 0 and later
// removed the only complete state, D.old, at its first save.
bool recover_directory(const std::string& directory) {
  const std::string temporary = directory + ".tmp";
  const std::string old = directory + ".old";
  struct stat info;
  const auto exists = [&](const std::string& path) { return ::lstat(path.c_str(), &info) == 0; };
  bool repaired = false;
  if (!exists(directory) && exists(old)) {
    // (Without D.tmp, which the swap never leaves so, D.old is the only copy: it goes back.)
    const bool finish = exists(temporary);
    rename_path(finish ? temporary : old, directory);
    log_info("recovered " + directory + ": a replacement stopped between its renames was " +
             (finish ? "finished" : "undone"));
    repaired = true;
  }
  for (const std::string& leftover : {temporary, old}) {
    if (!exists(leftover)) continue;
    remove_tree(leftover);
    log_info("removed " + leftover + ", left by a replacement of " + directory + " that stopped");
    repaired = true;
  }
  return repaired;
}

void replace_directory(const std::string& directory,
                       const std::function<void(const std::string& temporary)>& write,
                       const std::function<void(int step)>& after_step) {
  const auto step = [&](int done) {
    if (after_step) after_step(done);
  };
  const std::string temporary = directory + ".tmp";
  const std::string old = directory + ".old";
  recover_directory(directory);
  fs::create_directories(temporary);
  write(temporary);
  step(1);
  struct stat info;
  const bool had_target = ::lstat(directory.c_str(), &info) == 0;
  if (had_target) rename_path(directory, old);
  step(2);
  rename_path(temporary, directory);
  step(3);
  if (had_target) remove_tree(old);
  step(4);
}

void save_train_state(const std::string& directory, model::CausalDiTImpl& model,
                      const std::vector<at::Tensor>& ema, AdamW& optimizer,
                      const TrainProgress& progress, const std::string& dtype) {
  const at::ScalarType type = dtype == "bf16" ? at::kBFloat16 : at::kFloat;
  const std::vector<std::string> names = parameter_names(model);
  const std::vector<at::Tensor>& params = optimizer.params();
  TensorMap tensors;
  for (size_t i = 0; i < names.size(); ++i) {
    tensors["param." + names[i]] = params[i].detach().to(at::kCPU, type);
    tensors["ema." + names[i]] = ema[i].to(at::kCPU, type);
    tensors["exp_avg." + names[i]] = optimizer.exp_avg()[i].to(at::kCPU, type);
    tensors["exp_avg_sq." + names[i]] = optimizer.exp_avg_sq()[i].to(at::kCPU, type);
  }
  const Metadata metadata{{"format", "worldcast-train-state"},
                          {"step", std::to_string(progress.step)},
                          {"seconds", std::to_string(progress.seconds)},
                          {"config", model::model_config_to_json(model.config()).dump()}};
  ShardOptions shards;
  shards.prefix = kStatePrefix;
  // Shards stay well under the GPU machine's 16 MB limit per file brought back.
  shards.max_shard_bytes = 12ull << 20;
  replace_directory(directory, [&](const std::string& temporary) {
    write_sharded_checkpoint(temporary, tensors, metadata, shards);
  });
}

bool load_train_state(const std::string& directory, model::CausalDiTImpl& model,
                      std::vector<at::Tensor>& ema, AdamW& optimizer, TrainProgress* progress) {
  recover_directory(directory);
  if (!fs::exists(fs::path(directory) / (std::string(kStatePrefix) + ".safetensors.index.json"))) {
    return false;
  }
  const Checkpoint checkpoint = Checkpoint::open(directory);
  check_finite(checkpoint);
  const auto meta = [&](const std::string& key) {
    const auto it = checkpoint.metadata().find(key);
    if (it == checkpoint.metadata().end())
      throw Error(checkpoint.path(), "metadata '" + key + "' missing");
    return it->second;
  };
  if (meta("format") != "worldcast-train-state") {
    throw Error(checkpoint.path(), "metadata 'format': not a worldcast training state");
  }
  TrainProgress loaded;
  try {
    loaded.step = std::stoll(meta("step"));
    loaded.seconds = std::stod(meta("seconds"));
  } catch (const std::exception&) {
    throw Error(checkpoint.path(), "metadata 'step'/'seconds': not a number");
  }
  // Read and check everything before touching the model, so a bad file changes nothing.
  const std::vector<std::string> names = parameter_names(model);
  const std::vector<at::Tensor>& params = optimizer.params();
  std::vector<at::Tensor> values[4];
  const char* kinds[4] = {"param.", "ema.", "exp_avg.", "exp_avg_sq."};
  for (int k = 0; k < 4; ++k) {
    for (size_t i = 0; i < names.size(); ++i) {
      const std::string name = kinds[k] + names[i];
      const at::Tensor value = to_tensor(checkpoint.at(name));
      if (value.sizes() != params[i].sizes()) {
        throw Error(checkpoint.path(), "tensor '" + name + "': shape does not match the model");
      }
      values[k].push_back(value);
    }
  }
  if (checkpoint.tensors().size() != 4 * names.size()) {
    throw Error(checkpoint.path(), "holds tensors the model does not have");
  }
  at::NoGradGuard no_grad;
  for (size_t i = 0; i < names.size(); ++i) {
    params[i].copy_(values[0][i]);
    ema[i].copy_(values[1][i]);
    optimizer.exp_avg()[i].copy_(values[2][i]);
    optimizer.exp_avg_sq()[i].copy_(values[3][i]);
  }
  optimizer.set_steps(loaded.step);
  if (progress) *progress = loaded;
  return true;
}

void export_model(const std::string& directory, const model::CausalDiTImpl& model,
                  const std::vector<at::Tensor>& weights) {
  const std::vector<std::string> names = parameter_names(model);
  TensorMap tensors;
  for (size_t i = 0; i < names.size(); ++i) {
    tensors[names[i]] = weights[i].detach().to(at::kCPU, at::kBFloat16);
  }
  // A token model travels with its codebook (a tile model with its tile book), beside the config
  // that names it.
  model::ModelConfig exported = model.config();
  if (exported.tokens.active()) {
    exported.tokens.file = exported.tokens.tiles() ? "tilebook.txt" : "codebook.txt";
  }
  const Metadata metadata{{"format", "worldcast-dit"},
                          {"config", model::model_config_to_json(exported).dump()}};
  replace_directory(directory, [&](const std::string& temporary) {
    write_sharded_checkpoint(temporary, tensors, metadata);
    const std::string book = (fs::path(temporary) / exported.tokens.file).string();
    if (exported.tokens.tiles()) {
      model::write_tile_book(book, *exported.tokens.tile_book);
    } else if (exported.tokens.active()) {
      model::write_codebook(book, *exported.tokens.codebook);
    }
    std::ofstream config(fs::path(temporary) / "config.json");
    config << model::model_config_to_json(exported).dump(2) << "\n";
    if (!config) throw Error(temporary, "cannot write config.json");
  });
}

}  // namespace wc::train
