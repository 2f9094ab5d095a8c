// Checkpoints: one safetensors file, or shards plus a Hugging Face style index; writing shards.
#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <regex>
#include <set>

#include "engine/core/atomic_file.h"
#include "engine/core/bounded_read.h"
#include "engine/core/error.h"
#include "engine/core/log.h"
#include "engine/core/safetensors.h"
#include "engine/core/safetensors_internal.h"

namespace wc {
namespace {

namespace fs = std::filesystem;
using Json = nlohmann::json;

constexpr const char* kIndexSuffix = ".safetensors.index.json";
constexpr uintmax_t kMaxIndexBytes = 100ull << 20;

bool ends_with(const std::string& text, const std::string& suffix) {
  return text.size() >= suffix.size() &&
         text.compare(text.size() - suffix.size(), suffix.size(), suffix) == 0;
}

std::string shard_name(const std::string& prefix, size_t index, size_t count) {
  char name[64];
  std::snprintf(name, sizeof(name), "-%05zu-of-%05zu.safetensors", index, count);
  return prefix + name;
}

// A shard name from an index must stay inside the checkpoint's folder.
bool is_plain_file_name(const std::string& name) {
  if (name.empty() || name == "." || name == "..") return false;
  return std::none_of(name.begin(), name.end(), [](char c) {
    return c == '/' || c == '\\' || static_cast<unsigned char>(c) < 0x20;
  });
}

}  // namespace

std::vector<std::string> write_sharded_checkpoint(const std::string& directory,
                                                  const std::vector<TensorView>& tensors,
                                                  const Metadata& metadata,
                                                  const ShardOptions& options) {
  if (options.prefix.empty() || !is_plain_file_name(options.prefix)) {
    throw Error(directory, "invalid shard prefix " + quoted_name(options.prefix));
  }
  std::vector<const TensorView*> sorted;
  for (const TensorView& tensor : tensors) sorted.push_back(&tensor);
  std::sort(sorted.begin(), sorted.end(),
            [](const TensorView* a, const TensorView* b) { return a->name < b->name; });
  for (size_t i = 1; i < sorted.size(); ++i) {
    if (sorted[i]->name == sorted[i - 1]->name) {
      throw Error(directory, "tensor " + quoted_name(sorted[i]->name) + " is given twice");
    }
  }

  // Greedy packing in name order; a tensor larger than the limit gets a shard of its own.
  std::vector<std::vector<TensorView>> shards(1);
  uint64_t shard_bytes = 0, total_bytes = 0;
  for (const TensorView* tensor : sorted) {
    if (!shards.back().empty() && shard_bytes + tensor->byte_size > options.max_shard_bytes) {
      shards.emplace_back();
      shard_bytes = 0;
    }
    shards.back().push_back(*tensor);
    shard_bytes += tensor->byte_size;
    total_bytes += tensor->byte_size;
  }

  std::error_code error;
  fs::create_directories(directory, error);
  if (error) throw Error(directory, "cannot create folder: " + error.message());

  std::vector<std::string> names;
  Json weight_map = Json::object();
  for (size_t i = 0; i < shards.size(); ++i) {
    names.push_back(shard_name(options.prefix, i + 1, shards.size()));
    write_safetensors((fs::path(directory) / names.back()).string(), shards[i], metadata);
    for (const TensorView& tensor : shards[i]) weight_map[tensor.name] = names.back();
  }
  Json index_metadata = Json::object();
  for (const auto& [key, value] : metadata) index_metadata[key] = value;
  index_metadata["total_size"] = total_bytes;
  const Json index = {{"metadata", index_metadata}, {"weight_map", weight_map}};
  write_file_atomically((fs::path(directory) / (options.prefix + kIndexSuffix)).string(),
                        index.dump(2) + "\n");

  // Shards of an earlier, differently split write would make the folder ambiguous to other tools.
  const std::regex stale(options.prefix.find_first_of("^$.|?*+()[]{}\\") == std::string::npos
                             ? options.prefix + "-[0-9]{5}-of-[0-9]{5}\\.safetensors"
                             : std::string("$^"));
  for (const auto& entry : fs::directory_iterator(directory, error)) {
    const std::string name = entry.path().filename().string();
    if (std::regex_match(name, stale) &&
        std::find(names.begin(), names.end(), name) == names.end()) {
      fs::remove(entry.path(), error);
    }
  }
  return names;
}

Checkpoint Checkpoint::open(const std::string& path) {
  std::error_code error;
  const fs::file_status status = fs::status(path, error);
  if (error || !fs::exists(status)) throw Error(path, "no such file or folder");

  std::string index_path;
  std::string single_path;
  if (fs::is_directory(status)) {
    std::vector<std::string> indexes, files;
    for (const auto& entry : fs::directory_iterator(path, error)) {
      const std::string name = entry.path().filename().string();
      if (ends_with(name, kIndexSuffix)) indexes.push_back(entry.path().string());
      if (ends_with(name, ".safetensors")) files.push_back(entry.path().string());
    }
    if (error) throw Error(path, "cannot list folder: " + error.message());
    if (indexes.size() > 1) {
      throw Error(path, std::to_string(indexes.size()) + " checkpoint indexes (*" + kIndexSuffix +
                            "); keep one");
    }
    if (indexes.size() == 1) {
      index_path = indexes[0];
    } else if (files.size() == 1) {
      single_path = files[0];
    } else if (files.empty()) {
      throw Error(path, "no .safetensors file and no index in this folder");
    } else {
      throw Error(path, std::to_string(files.size()) +
                            " .safetensors files but no index saying which belong together");
    }
  } else if (ends_with(path, ".index.json")) {
    index_path = path;
  } else {
    single_path = path;
  }

  Checkpoint checkpoint;
  checkpoint.path_ = path;
  checkpoint.index_path_ = index_path;
  if (!single_path.empty()) {
    checkpoint.files_.push_back(SafetensorsFile::open(single_path));
    checkpoint.metadata_ = checkpoint.files_[0].metadata();
    checkpoint.collect_tensors();
    return checkpoint;
  }

  // An index: {"metadata": {...}, "weight_map": {tensor: shard file}}.
  const std::string text = read_bounded_file(index_path, kMaxIndexBytes, "checkpoint index");
  const Json index = parse_json_strictly(text.data(), text.size(), index_path, "index", 3, "key");
  if (!index.is_object()) throw Error(index_path, "not a JSON object");
  for (const auto& field : index.items()) {
    if (field.key() != "metadata" && field.key() != "weight_map") {
      throw Error(index_path, "unknown key " + quoted_name(field.key()) +
                                  " (an index holds 'metadata' and 'weight_map')");
    }
  }
  std::optional<uint64_t> declared_total;
  if (index.contains("metadata")) {
    const Json& metadata = index["metadata"];
    if (!metadata.is_object()) throw Error(index_path, "'metadata' is not an object");
    for (const auto& [key, value] : metadata.items()) {
      if (key == "total_size") {
        if (!value.is_number_unsigned()) {
          throw Error(index_path, "'metadata.total_size' is not a non-negative integer");
        }
        declared_total = value.get<uint64_t>();
      }
      if (value.is_string()) {
        checkpoint.metadata_[key] = value.get<std::string>();
      } else if (value.is_number() || value.is_boolean()) {
        checkpoint.metadata_[key] = value.dump();
      } else {
        throw Error(index_path, "'metadata." + sanitized(key) + "' is not a string or number");
      }
    }
  }
  if (!index.contains("weight_map") || !index["weight_map"].is_object()) {
    throw Error(index_path, "missing or non-object 'weight_map'");
  }
  std::map<std::string, std::string> listed;  // tensor -> shard file name
  std::set<std::string> shard_names;
  for (const auto& [tensor, shard] : index["weight_map"].items()) {
    if (!shard.is_string() || !is_plain_file_name(shard.get<std::string>())) {
      throw Error(index_path, "tensor " + quoted_name(tensor) +
                                  ": shard is not a file name in the checkpoint's folder");
    }
    listed[tensor] = shard.get<std::string>();
    shard_names.insert(shard.get<std::string>());
  }

  const fs::path folder = fs::path(index_path).parent_path();
  std::map<std::string, std::string> stored;  // tensor -> shard it was found in
  for (const std::string& shard : shard_names) {
    const fs::path shard_path = folder / shard;
    if (!fs::exists(shard_path, error)) {
      const auto it = std::find_if(listed.begin(), listed.end(),
                                   [&](const auto& entry) { return entry.second == shard; });
      throw Error(index_path, "shard " + quoted_name(shard) + " (holding tensor " +
                                  quoted_name(it->first) + ") is missing");
    }
    checkpoint.files_.push_back(SafetensorsFile::open(shard_path.string()));
    for (const TensorView& tensor : checkpoint.files_.back().tensors()) {
      const auto [it, inserted] = stored.emplace(tensor.name, shard);
      if (!inserted) {
        throw Error(index_path, "tensor " + quoted_name(tensor.name) + " is stored in both " +
                                    quoted_name(it->second) + " and " + quoted_name(shard));
      }
      const auto entry = listed.find(tensor.name);
      if (entry == listed.end()) {
        throw Error(index_path, "tensor " + quoted_name(tensor.name) + " is stored in " +
                                    quoted_name(shard) + " but not listed in the weight_map");
      }
      if (entry->second != shard) {
        throw Error(index_path, "tensor " + quoted_name(tensor.name) + " is listed in " +
                                    quoted_name(entry->second) + " but stored in " +
                                    quoted_name(shard));
      }
    }
  }
  for (const auto& [tensor, shard] : listed) {
    if (stored.count(tensor) == 0) {
      throw Error(index_path, "tensor " + quoted_name(tensor) + " is listed in " +
                                  quoted_name(shard) + " but absent from it");
    }
  }
  checkpoint.collect_tensors();
  if (declared_total && *declared_total != checkpoint.total_bytes()) {
    // Some exporters count total_size differently (tied weights, headers); not worth refusing.
    log_warning(index_path, ": metadata.total_size ", *declared_total, " differs from the ",
                checkpoint.total_bytes(), " bytes of tensor data in the shards");
  }
  return checkpoint;
}

void Checkpoint::collect_tensors() {
  tensors_.clear();
  for (const SafetensorsFile& file : files_) {
    for (const TensorView& tensor : file.tensors()) tensors_.push_back(&tensor);
  }
  std::sort(tensors_.begin(), tensors_.end(),
            [](const TensorView* a, const TensorView* b) { return a->name < b->name; });
}

uint64_t Checkpoint::total_bytes() const {
  uint64_t total = 0;
  for (const TensorView* tensor : tensors_) total += tensor->byte_size;
  return total;
}

const TensorView* Checkpoint::find(std::string_view name) const {
  const auto it =
      std::lower_bound(tensors_.begin(), tensors_.end(), name,
                       [](const TensorView* a, std::string_view b) { return a->name < b; });
  return it != tensors_.end() && (*it)->name == name ? *it : nullptr;
}

const TensorView& Checkpoint::at(std::string_view name) const {
  const TensorView* tensor = find(name);
  if (tensor == nullptr) throw Error(path_, "no tensor " + quoted_name(name));
  return *tensor;
}

}  // namespace wc
