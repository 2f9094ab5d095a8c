// Checked reading of a JSON object's fields: every accessor names the file and the field path in
// its error, and leftover keys (usually typos) can be rejected. Configs of every kind use it.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "engine/core/error.h"

namespace wc {

// Reads the fields of one JSON object, remembering which were consumed so leftovers (unknown
// keys, usually typos) can be rejected.
class ObjectReader {
 public:
  ObjectReader(const nlohmann::json& json, std::string file, std::string path)
      : json_(json), file_(std::move(file)), path_(std::move(path)) {
    if (!json_.is_object()) fail(path_.empty() ? "(top level)" : path_, "expected an object");
  }

  [[noreturn]] void fail(const std::string& field, const std::string& what) const {
    throw Error(file_, "field '" + field + "': " + what);
  }
  std::string field_path(const std::string& key) const {
    return path_.empty() ? key : path_ + "." + key;
  }

  const nlohmann::json& get(const std::string& key) {
    seen_.insert(key);
    const auto it = json_.find(key);
    if (it == json_.end()) fail(field_path(key), "missing");
    return *it;
  }
  bool has(const std::string& key) const { return json_.contains(key); }

  int integer(const std::string& key, int lo, int hi) {
    const nlohmann::json& value = get(key);
    if (!value.is_number_integer()) fail(field_path(key), "expected an integer");
    if (!in_range(value, lo, hi)) {
      fail(field_path(key), "must be in [" + std::to_string(lo) + ", " + std::to_string(hi) +
                                "], got " + value.dump());
    }
    return static_cast<int>(value.get<int64_t>());
  }
  double number(const std::string& key, double lo, double hi) {
    const nlohmann::json& value = get(key);
    if (!value.is_number()) fail(field_path(key), "expected a number");
    const double v = value.get<double>();
    if (!(v >= lo && v <= hi)) {
      std::ostringstream message;
      message << "must be in [" << lo << ", " << hi << "], got " << v;
      fail(field_path(key), message.str());
    }
    return v;
  }
  bool boolean(const std::string& key) {
    const nlohmann::json& value = get(key);
    if (!value.is_boolean()) fail(field_path(key), "expected true or false");
    return value.get<bool>();
  }
  std::string string(const std::string& key) {
    const nlohmann::json& value = get(key);
    if (!value.is_string()) fail(field_path(key), "expected a string");
    return value.get<std::string>();
  }
  // [a, b, ...] of `count` integers in [lo, hi].
  std::vector<int> integers(const std::string& key, size_t count, int lo, int hi) {
    const nlohmann::json& value = get(key);
    if (!value.is_array() || value.size() != count) {
      fail(field_path(key), "expected an array of " + std::to_string(count) + " integers");
    }
    std::vector<int> out;
    for (size_t i = 0; i < count; ++i) {
      const std::string item = field_path(key) + "[" + std::to_string(i) + "]";
      if (!value[i].is_number_integer()) fail(item, "expected an integer");
      if (!in_range(value[i], lo, hi))
        fail(item, "must be in [" + std::to_string(lo) + ", " + std::to_string(hi) + "], got " +
                       value[i].dump());
      out.push_back(static_cast<int>(value[i].get<int64_t>()));
    }
    return out;
  }

  // Throws for the first key that no accessor asked for.
  void reject_unknown() const {
    for (const auto& [key, unused] : json_.items()) {
      if (!seen_.count(key)) fail(field_path(key), "unknown key");
    }
  }

  const std::string& file() const { return file_; }

 private:
  // Whether an integer `value` lies in [lo, hi]. JSON integers above 2^63 − 1 parse as unsigned,
  // and read as int64 they would wrap to a negative number (shown, or even let through).
  static bool in_range(const nlohmann::json& value, int lo, int hi) {
    if (value.is_number_unsigned()) {  // every integer ≥ 0 parses as unsigned
      const uint64_t v = value.get<uint64_t>();
      return hi >= 0 && v <= static_cast<uint64_t>(hi) &&
             (lo <= 0 || v >= static_cast<uint64_t>(lo));
    }
    const int64_t v = value.get<int64_t>();
    return v >= lo && v <= hi;
  }

  const nlohmann::json& json_;
  std::string file_;
  std::string path_;
  std::set<std::string> seen_;
};

}  // namespace wc
