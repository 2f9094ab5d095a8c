// libFuzzer target: arbitrary bytes through the one JSON way in (parse_json, Note [Checked
// JSON]) and a config-shaped ObjectReader. Only wc::Error may leave either (an out_of_range or a
// type_error from nlohmann would reach a user as an internal error); what parses dumps and parses
// back as itself. Built by run_fuzz.sh.
#include <cstdint>
#include <cstdlib>
#include <string>

#include "engine/core/error.h"
#include "engine/core/json_object_reader.h"
#include "engine/core/json_text.h"

namespace {

void require(bool condition) {
  if (!condition) std::abort();  // libFuzzer records the input as a crash
}

// Reads `json` the way a config does: bounded numbers, flags, strings, arrays, a nested object,
// leftovers refused.
void read_like_a_config(const nlohmann::json& json) {
  wc::ObjectReader reader(json, "fuzz.json", "");
  if (reader.has("hidden")) (void)reader.integer("hidden", 1, 65536);
  if (reader.has("eps")) (void)reader.number("eps", 0.0, 1.0);
  if (reader.has("flag")) (void)reader.boolean("flag");
  if (reader.has("name")) (void)reader.string("name");
  if (reader.has("patch")) (void)reader.integers("patch", 3, 1, 64);
  if (reader.has("sampler")) {
    wc::ObjectReader sampler(reader.get("sampler"), "fuzz.json", "sampler");
    if (sampler.has("steps")) (void)sampler.integer("steps", 1, 64);
    if (sampler.has("shift")) (void)sampler.number("shift", 0.0, 100.0);
    sampler.reject_unknown();
  }
  reader.reject_unknown();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  nlohmann::json json;
  try {
    json = wc::parse_json(text, "fuzz.json");
  } catch (const wc::Error& e) {
    require(std::string(e.what()).find("fuzz.json") != std::string::npos);
    return 0;
  }
  require(wc::parse_json(json.dump(), "again") == json);
  try {
    read_like_a_config(json);
  } catch (const wc::Error& e) {
    require(std::string(e.what()).find("fuzz.json") != std::string::npos);
  }
  return 0;
}
