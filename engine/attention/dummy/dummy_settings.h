// The `dummy` policy's settings: parsing and validation of its JSON object (see dummy_policy.h
// for what each key means).
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <vector>

#include "engine/attention/attention_policy.h"
#include "engine/attention/headcast/head_type.h"

namespace wc::attention {

struct DummySettings {
  int num_dummy = 0;       // Dummy heads over all layers
  int classify_block = 1;  // blocks committed before the classifying clean pass
  int query_sample = 0;    // sampled query rows; 0 = N_f / 3
  int context_blocks = 1;  // blocks kept by Neighbour heads
  uint64_t seed = 0;       // query-row sampling
  nlohmann::json cast;     // null, or the forced cast as given
  std::optional<std::vector<std::vector<HeadType>>> forced;  // [layer][head], from `cast`
};

DummySettings default_dummy_settings(const ModelShape& shape);

// `base` updated with the keys of `settings`; throws wc::Error naming the key for an unknown key
// or a bad value, before anything is changed.
DummySettings parse_dummy_settings(const nlohmann::json& settings, const DummySettings& base,
                                   const ModelShape& shape);

nlohmann::json dummy_settings_json(const DummySettings& settings);

}  // namespace wc::attention
