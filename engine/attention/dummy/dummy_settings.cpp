// See dummy_settings.h.
#include "engine/attention/dummy/dummy_settings.h"

#include <limits>
#include <string>

#include "engine/core/error.h"

namespace wc::attention {
namespace {

constexpr const char* kWhere = "policy dummy";
constexpr const char* kKnownKeys =
    "num_dummy, classify_block, query_sample, context_blocks, seed, cast";
// Neighbour stores hold context_blocks whole blocks per layer; beyond this it is a typo.
constexpr int64_t kMaxContextBlocks = 64;

int64_t integer_in_range(const std::string& key, const nlohmann::json& value, int64_t lo,
                         int64_t hi) {
  const std::string range = "[" + std::to_string(lo) + ", " + std::to_string(hi) + "]";
  if (!value.is_number_integer()) {
    throw Error(kWhere,
                "setting '" + key + "' must be an integer in " + range + ", got " + value.dump());
  }
  if (value.is_number_unsigned() &&
      value.get<uint64_t>() > static_cast<uint64_t>(std::numeric_limits<int64_t>::max())) {
    throw Error(kWhere,
                "setting '" + key + "' must be an integer in " + range + ", got " + value.dump());
  }
  const int64_t number = value.get<int64_t>();
  if (number < lo || number > hi) {
    throw Error(kWhere,
                "setting '" + key + "' must be an integer in " + range + ", got " + value.dump());
  }
  return number;
}

std::vector<std::vector<HeadType>> parse_mix(const nlohmann::json& mix, const ModelShape& shape) {
  const std::string key = "cast.mix";
  if (!mix.is_array() || mix.size() != 3) {
    throw Error(kWhere, "setting '" + key +
                            "' must be [n_sink, n_dummy, n_neighbour] (heads per layer), got " +
                            mix.dump());
  }
  int64_t counts[3];
  for (size_t i = 0; i < 3; ++i) {
    counts[i] = integer_in_range(key + "[" + std::to_string(i) + "]", mix[i], 0, shape.num_heads);
  }
  if (counts[0] + counts[1] + counts[2] != shape.num_heads) {
    throw Error(kWhere, "setting '" + key + "' must add up to the " +
                            std::to_string(shape.num_heads) + " heads of a layer, got " +
                            mix.dump());
  }
  // Heads in order: the first n_sink are Sink, then n_dummy Dummy, then Neighbour.
  std::vector<HeadType> layer;
  for (int64_t i = 0; i < counts[0]; ++i) layer.push_back(HeadType::kSink);
  for (int64_t i = 0; i < counts[1]; ++i) layer.push_back(HeadType::kDummy);
  for (int64_t i = 0; i < counts[2]; ++i) layer.push_back(HeadType::kNeighbour);
  return std::vector<std::vector<HeadType>>(static_cast<size_t>(shape.num_layers), layer);
}

std::vector<std::vector<HeadType>> parse_layers(const nlohmann::json& layers,
                                                const ModelShape& shape) {
  const std::string key = "cast.layers";
  if (!layers.is_array() || layers.size() != static_cast<size_t>(shape.num_layers)) {
    throw Error(kWhere, "setting '" + key + "' must be an array of " +
                            std::to_string(shape.num_layers) + " layers of head types");
  }
  std::vector<std::vector<HeadType>> cast;
  for (size_t l = 0; l < layers.size(); ++l) {
    const std::string layer_key = key + "[" + std::to_string(l) + "]";
    const auto& row = layers[l];
    if (!row.is_array() || row.size() != static_cast<size_t>(shape.num_heads)) {
      throw Error(kWhere, "setting '" + layer_key + "' must list " +
                              std::to_string(shape.num_heads) + " head types");
    }
    std::vector<HeadType> types;
    for (size_t h = 0; h < row.size(); ++h) {
      const std::string head_key = layer_key + "[" + std::to_string(h) + "]";
      const auto type =
          row[h].is_string() ? parse_head_type(row[h].get<std::string>()) : std::nullopt;
      if (!type || (*type != HeadType::kSink && *type != HeadType::kDummy &&
                    *type != HeadType::kNeighbour)) {
        throw Error(kWhere, "setting '" + head_key + "' must be \"sink\", \"dummy\" or " +
                                "\"neighbour\", got " + row[h].dump());
      }
      types.push_back(*type);
    }
    cast.push_back(std::move(types));
  }
  return cast;
}

}  // namespace

DummySettings default_dummy_settings(const ModelShape& shape) {
  DummySettings settings;
  settings.num_dummy = shape.num_layers * shape.num_heads / 2;
  settings.cast = nullptr;
  return settings;
}

DummySettings parse_dummy_settings(const nlohmann::json& settings, const DummySettings& base,
                                   const ModelShape& shape) {
  if (!settings.is_object()) throw Error(kWhere, "settings must be a JSON object");
  DummySettings out = base;
  for (const auto& [key, value] : settings.items()) {
    if (key == "num_dummy") {
      out.num_dummy = static_cast<int>(
          integer_in_range(key, value, 0, int64_t{shape.num_layers} * shape.num_heads));
    } else if (key == "classify_block") {
      // Block 0 has no history to measure mass on, so classification needs at least one block.
      out.classify_block = static_cast<int>(integer_in_range(key, value, 1, 1 << 20));
    } else if (key == "query_sample") {
      out.query_sample = static_cast<int>(integer_in_range(key, value, 0, 1 << 24));
    } else if (key == "context_blocks") {
      out.context_blocks = static_cast<int>(integer_in_range(key, value, 1, kMaxContextBlocks));
    } else if (key == "seed") {
      if (!value.is_number_integer() || (!value.is_number_unsigned() && value.get<int64_t>() < 0)) {
        throw Error(kWhere, "setting 'seed' must be a non-negative integer, got " + value.dump());
      }
      out.seed = value.get<uint64_t>();
    } else if (key == "cast") {
      if (value.is_null()) {
        out.forced.reset();
      } else if (value.is_object() && value.size() == 1 && value.contains("mix")) {
        out.forced = parse_mix(value["mix"], shape);
      } else if (value.is_object() && value.size() == 1 && value.contains("layers")) {
        out.forced = parse_layers(value["layers"], shape);
      } else {
        throw Error(kWhere,
                    "setting 'cast' must be null, {\"mix\": [n_sink, n_dummy, "
                    "n_neighbour]} or {\"layers\": [[types...], ...]}, got " +
                        value.dump());
      }
      out.cast = value;
    } else {
      throw Error(kWhere, "unknown setting '" + key + "' (known: " + kKnownKeys + ")");
    }
  }
  return out;
}

nlohmann::json dummy_settings_json(const DummySettings& settings) {
  return {{"num_dummy", settings.num_dummy},
          {"classify_block", settings.classify_block},
          {"query_sample", settings.query_sample},
          {"context_blocks", settings.context_blocks},
          {"seed", settings.seed},
          {"cast", settings.cast}};
}

}  // namespace wc::attention
