// Parsing and validation of the dense / headcast settings; see cast_settings.h.
#include "engine/attention/headcast/cast_settings.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <limits>
#include <numeric>
#include <random>
#include <string>

#include "engine/core/error.h"

namespace wc::attention {
namespace {

constexpr int64_t kDefaultWindowBlocks = 7;

[[noreturn]] void fail(const char* where, const std::string& key, const std::string& message) {
  throw Error(where, "key '" + key + "': " + message);
}

double read_number(const nlohmann::json& value, const char* where, const std::string& key,
                   double min, double max) {
  if (!value.is_number()) fail(where, key, "expected a number, got " + value.dump());
  const double number = value.get<double>();
  if (!std::isfinite(number) || number < min || number > max) {
    fail(where, key,
         "must be a finite number in [" + std::to_string(min) + ", " + std::to_string(max) +
             "], got " + value.dump());
  }
  return number;
}

const char* cell_mode_name(CellMode mode) {
  switch (mode) {
    case CellMode::kDivisor:
      return "divisor";
    case CellMode::kRagged:
      return "ragged";
    case CellMode::kRounded:
      return "rounded";
  }
  return "rounded";
}

const char* spatial_proxy_name(SpatialProxyKind kind) {
  return kind == SpatialProxyKind::kCells ? "cells" : "neighbourhood";
}

// Checks a "cast" value and returns it unchanged (null, {"mix": [...]}, {"layers": [[...]]}).
nlohmann::json validate_cast(const nlohmann::json& cast, const ModelShape& shape,
                             const char* where) {
  if (cast.is_null()) return cast;
  if (!cast.is_object() || cast.size() != 1 || !(cast.contains("mix") || cast.contains("layers"))) {
    fail(where, "cast", "expected null, {\"mix\": [...]} or {\"layers\": [[...], ...]}");
  }
  if (cast.contains("mix")) {
    const auto& mix = cast["mix"];
    if (!mix.is_array() || mix.size() != 4) {
      fail(where, "cast.mix", "expected [n_sink, n_dummy, n_spatial, n_global]");
    }
    int64_t sum = 0;
    for (const auto& count : mix)
      sum += read_int_setting(count, where, "cast.mix", 0, shape.num_heads);
    if (sum != shape.num_heads) {
      fail(where, "cast.mix",
           "counts sum to " + std::to_string(sum) + ", the model has " +
               std::to_string(shape.num_heads) + " heads per layer");
    }
    return cast;
  }
  const auto& layers = cast["layers"];
  if (!layers.is_array() || static_cast<int>(layers.size()) != shape.num_layers) {
    fail(where, "cast.layers",
         "expected one list per layer (" + std::to_string(shape.num_layers) + ")");
  }
  for (size_t layer = 0; layer < layers.size(); ++layer) {
    const std::string key = "cast.layers[" + std::to_string(layer) + "]";
    const auto& heads = layers[layer];
    if (!heads.is_array() || static_cast<int>(heads.size()) != shape.num_heads) {
      fail(where, key, "expected " + std::to_string(shape.num_heads) + " head types");
    }
    for (const auto& name : heads) {
      const auto type = name.is_string() ? parse_head_type(name.get<std::string>()) : std::nullopt;
      if (!type || (*type != HeadType::kSink && *type != HeadType::kDummy &&
                    *type != HeadType::kSpatial && *type != HeadType::kGlobal)) {
        fail(where, key,
             "unknown head type " + name.dump() + " (sink, dummy, spatial, global or S, D, P, G)");
      }
    }
  }
  return cast;
}

}  // namespace

CastSettings default_cast_settings(const ModelShape& shape) {
  CastSettings settings;
  settings.window = kDefaultWindowBlocks * shape.geometry.frames;
  settings.cast = nullptr;
  return settings;
}

int64_t parse_window_setting(const nlohmann::json& value, const BlockGeometry& geometry,
                             int64_t min_frames, const char* where) {
  const int64_t window = read_int_setting(value, where, "window", 0, int64_t{1} << 40);
  if (window != 0 && window < min_frames) {
    fail(where, "window",
         "must be 0 (unbounded) or at least " + std::to_string(min_frames) + " frames, got " +
             std::to_string(window));
  }
  (void)geometry;
  return window;
}

CastSettings apply_cast_settings(CastSettings base, const nlohmann::json& json,
                                 const ModelShape& shape, const char* where) {
  if (!json.is_object()) throw Error(where, "settings must be a JSON object");
  constexpr double kBig = 1e9;
  auto& t = base.thresholds;
  nlohmann::json ann = nlohmann::json::object();
  for (const auto& [key, value] : json.items()) {
    if (is_ann_key(key)) {
      ann[key] = value;
    } else if (key == "global_ann") {
      if (!value.is_boolean()) fail(where, key, "expected true or false, got " + value.dump());
      base.global_ann = value.get<bool>();
    } else if (key == "window") {
      // Headcast needs the sink block plus at least one rolling block (the Dummy context).
      base.window = parse_window_setting(value, shape.geometry, 2 * shape.geometry.frames, where);
    } else if (key == "theta_dummy") {
      t.theta_dummy = read_number(value, where, key, -kBig, kBig);
    } else if (key == "theta_sink") {
      t.theta_sink = read_number(value, where, key, -kBig, kBig);
    } else if (key == "theta_spatial") {
      t.theta_spatial = read_number(value, where, key, -kBig, kBig);
    } else if (key == "theta_spatial_score") {
      t.theta_spatial_score = read_number(value, where, key, -kBig, kBig);
    } else if (key == "gamma") {
      t.gamma = read_number(value, where, key, 0.0, kBig);
    } else if (key == "worst_token") {
      if (!value.is_boolean()) fail(where, key, "expected true or false, got " + value.dump());
      t.worst_token = value.get<bool>();
    } else if (key == "spatial_proxy") {
      if (value == "neighbourhood") {
        base.spatial_proxy = SpatialProxyKind::kNeighbourhood;
      } else if (value == "cells") {
        base.spatial_proxy = SpatialProxyKind::kCells;
      } else {
        fail(where, key, "expected \"neighbourhood\" or \"cells\", got " + value.dump());
      }
    } else if (key == "radius") {
      base.radius = static_cast<int>(read_int_setting(value, where, key, 0, 1 << 16));
    } else if (key == "cell") {
      base.cell = static_cast<int>(read_int_setting(value, where, key, 1, 1 << 16));
    } else if (key == "cell_mode") {
      if (value == "divisor") {
        base.cell_mode = CellMode::kDivisor;
      } else if (value == "ragged") {
        base.cell_mode = CellMode::kRagged;
      } else if (value == "rounded") {
        base.cell_mode = CellMode::kRounded;
      } else {
        fail(where, key, "expected \"rounded\", \"divisor\" or \"ragged\", got " + value.dump());
      }
    } else if (key == "classify_block") {
      const int64_t block = read_int_setting(value, where, key, -1, int64_t{1} << 40);
      if (block == 0) fail(where, key, "must be -1 (auto) or >= 1 (block 0 has no history)");
      base.classify_block = block;
    } else if (key == "classify_step") {
      base.classify_step = static_cast<int>(read_int_setting(value, where, key, 0, 1 << 16));
    } else if (key == "classify_every_step") {
      if (!value.is_boolean()) fail(where, key, "expected true or false, got " + value.dump());
      base.classify_every_step = value.get<bool>();
    } else if (key == "query_sample") {
      base.query_sample = read_int_setting(value, where, key, 0, int64_t{1} << 40);
    } else if (key == "seed") {
      base.seed = static_cast<uint64_t>(
          read_int_setting(value, where, key, 0, std::numeric_limits<int64_t>::max()));
    } else if (key == "cast") {
      base.cast = validate_cast(value, shape, where);
    } else {
      fail(where, key,
           "unknown key (known: window, theta_dummy, theta_sink, theta_spatial, "
           "theta_spatial_score, gamma, worst_token, spatial_proxy, radius, cell, cell_mode, "
           "classify_block, "
           "classify_step, classify_every_step, query_sample, seed, cast, global_ann, " +
               std::string(kAnnKeyList) + ")");
    }
  }
  base.ann = apply_ann_settings(base.ann, ann, where);
  if (base.window == 0 && base.classify_block < 0 && base.cast.is_null()) {
    fail(where, "classify_block",
         "must be given (>= 1) when window is 0 (unbounded): there is no window to fill");
  }
  return base;
}

nlohmann::json cast_settings_json(const CastSettings& settings) {
  const auto& t = settings.thresholds;
  nlohmann::json json = {{"window", settings.window},
                         {"theta_dummy", t.theta_dummy},
                         {"theta_sink", t.theta_sink},
                         {"theta_spatial", t.theta_spatial},
                         {"theta_spatial_score", t.theta_spatial_score},
                         {"gamma", t.gamma},
                         {"worst_token", t.worst_token},
                         {"spatial_proxy", spatial_proxy_name(settings.spatial_proxy)},
                         {"radius", settings.radius},
                         {"cell", settings.cell},
                         {"cell_mode", cell_mode_name(settings.cell_mode)},
                         {"classify_block", settings.classify_block},
                         {"classify_step", settings.classify_step},
                         {"classify_every_step", settings.classify_every_step},
                         {"query_sample", settings.query_sample},
                         {"seed", settings.seed},
                         {"cast", settings.cast}};
  // AnnSA's keys only where it runs: every other reader of a cast's settings sees them unchanged.
  if (settings.global_ann) {
    json["global_ann"] = true;
    json.update(ann_settings_json(settings.ann));
  }
  return json;
}

std::optional<std::vector<std::vector<HeadType>>> forced_cast(const CastSettings& settings,
                                                              const ModelShape& shape) {
  if (settings.cast.is_null()) return std::nullopt;
  std::vector<std::vector<HeadType>> cast(shape.num_layers);
  if (settings.cast.contains("layers")) {
    for (int layer = 0; layer < shape.num_layers; ++layer) {
      for (const auto& name : settings.cast["layers"][layer]) {
        cast[layer].push_back(*parse_head_type(name.get<std::string>()));
      }
    }
    return cast;
  }
  constexpr std::array<HeadType, 4> kOrder = {HeadType::kSink, HeadType::kDummy, HeadType::kSpatial,
                                              HeadType::kGlobal};
  std::vector<HeadType> pool;
  for (size_t i = 0; i < kOrder.size(); ++i) {
    pool.insert(pool.end(), settings.cast["mix"][i].get<size_t>(), kOrder[i]);
  }
  for (int layer = 0; layer < shape.num_layers; ++layer) {
    std::mt19937_64 rng(settings.seed * 0x9E3779B97F4A7C15ull + static_cast<uint64_t>(layer));
    cast[layer] = pool;
    // Fisher-Yates with our own draws: std::shuffle's output differs between standard libraries.
    for (size_t i = pool.size(); i > 1; --i) std::swap(cast[layer][i - 1], cast[layer][rng() % i]);
  }
  return cast;
}

int64_t classification_block(const CastSettings& settings, const BlockGeometry& geometry,
                             int64_t warmup_start) {
  if (settings.classify_block >= 1) return warmup_start + settings.classify_block;
  const int64_t frames = geometry.frames;
  return warmup_start + (settings.window + frames - 1) / frames;
}

}  // namespace wc::attention
