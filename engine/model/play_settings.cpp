// See play_settings.h.
#include "engine/model/play_settings.h"

#include <sstream>

#include "engine/core/error.h"

namespace wc::model {

const std::vector<PlaySetting>& play_settings() {
  static const std::vector<PlaySetting> table = {
      {"temperature", "token-temperature", "token t",
       "How boldly each place is drawn (Note [Masked sampling]): low draws the likeliest tokens "
       "(new ground turns to grass), high every token the model cannot rule out",
       /*integer=*/false, TokenConfig::kMinTemperature, TokenConfig::kMaxTemperature, 0.05, 2.0,
       [](const TokenConfig& t) { return t.temperature; },
       [](TokenConfig& t, double v) { t.temperature = v; }},
      {"top_p", "token-top-p", "top p",
       "Each place draws only from its likeliest tokens whose probabilities add up to this "
       "share (nucleus sampling): 1 draws from the whole distribution",
       /*integer=*/false, TokenConfig::kMinTopP, 1.0, 0.5, 1.0,
       [](const TokenConfig& t) { return t.top_p; }, [](TokenConfig& t, double v) { t.top_p = v; }},
      {"passes", "token-passes", "passes",
       "Unmasking passes per frame: each is one model forward; more passes draw neighbouring "
       "places knowing each other",
       /*integer=*/true, 1.0, TokenConfig::kMaxPasses, 1.0, 8.0,
       [](const TokenConfig& t) { return static_cast<double>(t.passes); },
       [](TokenConfig& t, double v) { t.passes = static_cast<int>(v); }},
      {"sure", "token-sure", "sure",
       "Places the model is at least this sure of are shown in the first pass, and the passes go "
       "to the rest (the strip that scrolls in, the player): 1 spreads every place over the "
       "passes (MaskGIT's schedule)",
       /*integer=*/false, TokenConfig::kMinSure, 1.0, 0.5, 1.0,
       [](const TokenConfig& t) { return t.sure; }, [](TokenConfig& t, double v) { t.sure = v; }},
  };
  return table;
}

nlohmann::json play_values(const TokenConfig& tokens) {
  nlohmann::json values = nlohmann::json::object();
  if (!tokens.active()) return values;
  for (const PlaySetting& s : play_settings()) {
    const double value = s.read(tokens);
    if (s.integer) {
      values[s.key] = static_cast<int64_t>(value);
    } else {
      values[s.key] = value;
    }
  }
  return values;
}

namespace {

const PlaySetting* find_setting(const std::string& key) {
  for (const PlaySetting& s : play_settings()) {
    if (s.key == key) return &s;
  }
  return nullptr;
}

std::string known_keys() {
  std::string keys;
  for (const PlaySetting& s : play_settings()) keys += (keys.empty() ? "" : ", ") + s.key;
  return keys;
}

}  // namespace

std::string play_setting_problem(const PlaySetting& setting, const nlohmann::json& value) {
  if (setting.integer ? !value.is_number_integer() : !value.is_number()) {
    return std::string("expected ") + (setting.integer ? "an integer" : "a number") + ", got " +
           value.dump();
  }
  // Every range here fits in a double; an integer beyond int64 reads as one too.
  const double v =
      value.is_number_unsigned() ? static_cast<double>(value.get<uint64_t>()) : value.get<double>();
  if (!(v >= setting.min && v <= setting.max)) {
    std::ostringstream message;
    message << "must be in [" << setting.min << ", " << setting.max << "], got " << value.dump();
    return message.str();
  }
  return "";
}

TokenConfig with_play_settings(const TokenConfig& tokens, const nlohmann::json& settings,
                               const std::string& where) {
  if (!settings.is_object()) throw Error(where, "play settings must be a JSON object");
  TokenConfig out = tokens;
  for (const auto& [key, value] : settings.items()) {
    const std::string field = "field '" + key + "': ";
    const PlaySetting* s = find_setting(key);
    if (s == nullptr) {
      throw Error(where, field + "not a play setting (they are: " + known_keys() + ")");
    }
    if (!tokens.active()) throw Error(where, field + "the model draws no tokens");
    const std::string problem = play_setting_problem(*s, value);
    if (!problem.empty()) throw Error(where, field + problem);
    s->write(out, value.get<double>());
  }
  return out;
}

}  // namespace wc::model
