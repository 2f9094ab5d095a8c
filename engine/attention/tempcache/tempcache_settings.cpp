// Parsing and validation of the tempcache settings; see tempcache_settings.h.
#include "engine/attention/tempcache/tempcache_settings.h"

#include <array>
#include <cmath>
#include <string>

#include "engine/attention/ann/ann_settings.h"
#include "engine/attention/headcast/cast_settings.h"
#include "engine/core/error.h"

namespace wc::attention {
namespace {

constexpr std::array<const char*, 8> kKeys = {"tau",      "budget", "budget_frames",  "budget_rule",
                                              "lsh_bits", "seed",   "lsh_candidates", "bias_path"};

[[noreturn]] void fail(const char* where, const std::string& key, const std::string& message) {
  throw Error(where, "key '" + key + "': " + message);
}

}  // namespace

bool is_tempcache_key(const std::string& key) {
  for (const char* known : kKeys) {
    if (key == known) return true;
  }
  return false;
}

const char* budget_rule_name(BudgetRule rule) {
  return rule == BudgetRule::kEvictOldest ? "evict_oldest" : "merge_closest";
}

const char* bias_path_name(BiasPath path) {
  switch (path) {
    case BiasPath::kExtraDim:
      return "extra_dim";
    case BiasPath::kMask:
      return "mask";
    case BiasPath::kReference:
      return "reference";
    default:
      return "auto";
  }
}

TempCacheSettings apply_tempcache_settings(TempCacheSettings base, const nlohmann::json& json,
                                           const BlockGeometry& geometry, bool allow_window,
                                           const char* where) {
  if (!json.is_object()) throw Error(where, "settings must be a JSON object");
  if (json.contains("budget") && json.contains("budget_frames")) {
    fail(where, "budget_frames", "give the budget once: \"budget\" (entries) or \"budget_frames\"");
  }
  for (const auto& [key, value] : json.items()) {
    if (key == "tau") {
      if (!value.is_number()) fail(where, key, "expected a number, got " + value.dump());
      const double tau = value.get<double>();
      if (!std::isfinite(tau) || tau < 0.0 || tau > 1.0) {
        fail(where, key, "must be a cosine in [0, 1], got " + value.dump());
      }
      base.tau = tau;
    } else if (key == "budget") {
      base.budget = read_int_setting(value, where, key, 0, int64_t{1} << 40);
    } else if (key == "budget_frames") {
      base.budget =
          read_int_setting(value, where, key, 0, int64_t{1} << 20) * geometry.tokens_per_frame();
    } else if (key == "budget_rule") {
      if (value == "evict_oldest") {
        base.budget_rule = BudgetRule::kEvictOldest;
      } else if (value == "merge_closest") {
        base.budget_rule = BudgetRule::kMergeClosest;
      } else {
        fail(where, key, "expected \"evict_oldest\" or \"merge_closest\", got " + value.dump());
      }
    } else if (key == "window" && allow_window) {
      base.window = parse_window_setting(value, geometry, geometry.frames, where);
    } else if (key == "lsh_bits") {
      base.lsh_bits = static_cast<int>(read_int_setting(value, where, key, 0, 16));
    } else if (key == "lsh_candidates") {
      base.lsh_candidates = static_cast<int>(read_int_setting(value, where, key, 1, 64));
    } else if (key == "seed") {
      base.seed = static_cast<uint64_t>(read_int_setting(value, where, key, 0, INT64_MAX));
    } else if (key == "bias_path") {
      if (value == "auto") {
        base.bias_path = BiasPath::kAuto;
      } else if (value == "extra_dim") {
        base.bias_path = BiasPath::kExtraDim;
      } else if (value == "mask") {
        base.bias_path = BiasPath::kMask;
      } else if (value == "reference") {
        base.bias_path = BiasPath::kReference;
      } else {
        fail(where, key,
             "expected \"auto\", \"extra_dim\", \"mask\" or \"reference\", got " + value.dump());
      }
    } else {
      fail(where, key,
           "unknown key (known: tau, budget, budget_frames, budget_rule, window, lsh_bits, "
           "lsh_candidates, seed, bias_path)");
    }
  }
  // The sink block is never evicted and a frame is added before the budget is enforced.
  const int64_t min_budget = int64_t{geometry.frames + 1} * geometry.tokens_per_frame();
  if (base.budget != 0 && base.budget < min_budget) {
    fail(where, json.contains("budget_frames") ? "budget_frames" : "budget",
         "must be 0 (none) or at least (frames per block + 1) x tokens per frame = " +
             std::to_string(min_budget) + ", got " + std::to_string(base.budget));
  }
  return base;
}

nlohmann::json tempcache_settings_json(const TempCacheSettings& settings, bool with_window) {
  nlohmann::json json = {{"tau", settings.tau},
                         {"budget", settings.budget},
                         {"budget_rule", budget_rule_name(settings.budget_rule)},
                         {"lsh_bits", settings.lsh_bits},
                         {"lsh_candidates", settings.lsh_candidates},
                         {"seed", settings.seed},
                         {"bias_path", bias_path_name(settings.bias_path)}};
  if (with_window) json["window"] = settings.window;
  return json;
}

bool tempcache_limit_given(const nlohmann::json& settings) {
  return settings.is_object() &&
         (settings.contains("budget") || settings.contains("budget_frames") ||
          settings.contains("window"));
}

}  // namespace wc::attention
