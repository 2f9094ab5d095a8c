// Settings of the tempcache policy (and the TempCache half of "combined"): parsing, validation and
// the JSON they report. See Note [TempCache budget] in temp_cache_store.h for what they control.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>

#include "engine/attention/step_info.h"

namespace wc::attention {

// What a head does when its history exceeds the budget. See Note [TempCache budget].
enum class BudgetRule : uint8_t { kEvictOldest, kMergeClosest };

// How the log-count bias reaches the attention kernel. See Note [TempCache bias].
enum class BiasPath : uint8_t { kAuto, kExtraDim, kMask, kReference };

struct TempCacheSettings {
  double tau = 0.9;    // merge when cosine >= tau; tau >= 1 merges nothing (== dense)
  int64_t budget = 0;  // max entries per head, 0 = none; "budget_frames" sets it in frames
  BudgetRule budget_rule = BudgetRule::kEvictOldest;
  int64_t window = 0;      // frames (sink block included) an entry stays without a merge; 0 = all
  int lsh_bits = 8;        // random-projection sign bits of the bucket search, 0 = co-located only
  int lsh_candidates = 4;  // newest entries of the key's bucket compared per key
  uint64_t seed = 0;       // of the projections
  BiasPath bias_path = BiasPath::kAuto;
};

// Note [TempCache bounded by default]
// Unbounded, TempCache's history grows by every key that finds no match, so on a scrolling world
// its frame time and memory grow without end, against what the policy is for. A tempcache policy
// whose settings set no limit ("budget", "budget_frames" or "window") therefore gets a budget of
// as many entries as the model's dense window holds tokens ("budget_frames" = that window: the
// model config's dense window where it has one, else the default window of 7 blocks), so its
// cost never exceeds dense's while merging keeps more history. Unbounded only when asked for
// explicitly: "budget": 0.
// Whether `settings` set any limit of their own.
bool tempcache_limit_given(const nlohmann::json& settings);

// The tempcache-only keys (all of the above but "window", which combined shares with headcast).
bool is_tempcache_key(const std::string& key);

// `base` with the keys of `json` applied; throws wc::Error naming the key for unknown keys, wrong
// types and out-of-range values. `allow_window` = false rejects "window" (combined takes it from
// the headcast keys). `where` prefixes the messages.
TempCacheSettings apply_tempcache_settings(TempCacheSettings base, const nlohmann::json& json,
                                           const BlockGeometry& geometry, bool allow_window,
                                           const char* where);
nlohmann::json tempcache_settings_json(const TempCacheSettings& settings, bool with_window);

const char* budget_rule_name(BudgetRule rule);
const char* bias_path_name(BiasPath path);

}  // namespace wc::attention
