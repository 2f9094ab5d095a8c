// Settings of AnnSA (FAST-AR's bucketed self-attention) shared by the "annsa" and "fast-ar"
// policies: parsing, validation and the JSON they report. Every key starts "ann_", so they sit
// beside a policy's own keys (window, TempCache's) in one settings object.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>

namespace wc::attention {

struct AnnSettings {
  int bits = 6;        // "ann_bits": random-projection sign bits, 2^bits buckets, [1, 10]
  int radius = 1;      // "ann_radius": Hamming radius of a query's probe, [0, bits]
  int64_t tile = 128;  // "ann_tile": queries per tile (Note [AnnSA tiles]), [16, 4096]
  int64_t block = 64;  // "ann_block": history keys per block, a multiple of 16 in [16, 1024]
  uint64_t seed = 0;   // "ann_seed": of the projections
};

// Whether `key` is one of the AnnSA keys above.
bool is_ann_key(const std::string& key);

// `base` with the AnnSA keys of `json` applied (other keys are the caller's); wc::Error naming the
// key and its allowed range for wrong types and out-of-range values. `where` prefixes messages.
AnnSettings apply_ann_settings(AnnSettings base, const nlohmann::json& json, const char* where);

// The keys and values of `settings`, to merge into a policy's settings().
nlohmann::json ann_settings_json(const AnnSettings& settings);

// The integer `value` of setting `key` in [min, max]; wc::Error "<where>: key '<key>': ..." naming
// the range otherwise. Every policy's integer settings are read through it.
int64_t read_int_setting(const nlohmann::json& value, const char* where, const std::string& key,
                         int64_t min, int64_t max);

// The AnnSA keys, for "unknown key" messages.
inline constexpr const char* kAnnKeyList = "ann_bits, ann_radius, ann_tile, ann_block, ann_seed";

}  // namespace wc::attention
