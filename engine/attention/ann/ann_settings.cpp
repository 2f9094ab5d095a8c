// See ann_settings.h.
#include "engine/attention/ann/ann_settings.h"

#include <array>

#include "engine/core/error.h"

namespace wc::attention {
namespace {

constexpr std::array<const char*, 5> kKeys = {"ann_bits", "ann_radius", "ann_tile", "ann_block",
                                              "ann_seed"};

[[noreturn]] void fail(const char* where, const std::string& key, const std::string& message) {
  throw Error(where, "key '" + key + "': " + message);
}

}  // namespace

int64_t read_int_setting(const nlohmann::json& value, const char* where, const std::string& key,
                         int64_t min, int64_t max) {
  const std::string range = "[" + std::to_string(min) + ", " + std::to_string(max) + "]";
  if (!value.is_number_integer()) {
    fail(where, key, "expected an integer in " + range + ", got " + value.dump());
  }
  if (value.is_number_unsigned() && value.get<uint64_t>() > static_cast<uint64_t>(max)) {
    fail(where, key, "must be in " + range + ", got " + value.dump());
  }
  const int64_t number = value.is_number_unsigned() ? static_cast<int64_t>(value.get<uint64_t>())
                                                    : value.get<int64_t>();
  if (number < min || number > max) {
    fail(where, key, "must be in " + range + ", got " + std::to_string(number));
  }
  return number;
}

bool is_ann_key(const std::string& key) {
  for (const char* known : kKeys) {
    if (key == known) return true;
  }
  return false;
}

AnnSettings apply_ann_settings(AnnSettings base, const nlohmann::json& json, const char* where) {
  if (!json.is_object()) throw Error(where, "settings must be a JSON object");
  for (const auto& [key, value] : json.items()) {
    if (key == "ann_bits") {
      base.bits = static_cast<int>(read_int_setting(value, where, key, 1, 10));
    } else if (key == "ann_radius") {
      base.radius = static_cast<int>(read_int_setting(value, where, key, 0, 10));
    } else if (key == "ann_tile") {
      base.tile = read_int_setting(value, where, key, 16, 4096);
    } else if (key == "ann_block") {
      base.block = read_int_setting(value, where, key, 16, 1024);
      if (base.block % 16 != 0) {
        fail(where, key, "must be a multiple of 16 in [16, 1024], got " + value.dump());
      }
    } else if (key == "ann_seed") {
      base.seed = static_cast<uint64_t>(read_int_setting(value, where, key, 0, INT64_MAX));
    }
  }
  if (base.radius > base.bits) {
    fail(where, "ann_radius",
         "must be in [0, ann_bits] = [0, " + std::to_string(base.bits) + "], got " +
             std::to_string(base.radius));
  }
  return base;
}

nlohmann::json ann_settings_json(const AnnSettings& settings) {
  return {{"ann_bits", settings.bits},
          {"ann_radius", settings.radius},
          {"ann_tile", settings.tile},
          {"ann_block", settings.block},
          {"ann_seed", settings.seed}};
}

}  // namespace wc::attention
