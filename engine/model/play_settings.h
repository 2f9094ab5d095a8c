// The settings of how a model draws its frames that a player changes while playing, as one JSON
// object with one checked path from every caller to the sampler. See Note [Play settings].
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "engine/model/model_config.h"

namespace wc::model {

// Note [Play settings]
// A play setting is one key of the model config's "tokens" object (Note [Masked sampling]) that
// may change between blocks: the panel's sliders, `worldcast play`'s flags and
// --play-settings, a recording's replay line and Session::configure_play all carry the same
// JSON object ({"temperature": 0.8, "passes": 4}) and apply it through with_play_settings, which
// checks every key before any is set. Each setting is one entry of the table in
// play_settings.cpp: its key, its flag, its valid range, the panel's slider and the TokenConfig
// field it sets. A new setting is that entry, the field and the sampler's use of it; the panel,
// the flags, the inference thread, the recorder and the Session need no change.
struct PlaySetting {
  std::string key;    // in the JSON object and the config's "tokens"
  std::string flag;   // worldcast play's flag, without the leading "--"
  std::string label;  // the panel's slider
  std::string help;   // the flag's help and the slider's tooltip
  bool integer = false;
  double min = 0.0, max = 0.0;                // the values it may take
  double slider_min = 0.0, slider_max = 0.0;  // the panel's range (within min..max)
  double (*read)(const TokenConfig&) = nullptr;
  void (*write)(TokenConfig&, double) = nullptr;
};

// Every play setting, in the panel's order.
const std::vector<PlaySetting>& play_settings();

// The current value of every play setting of `tokens`; an empty object for a model that draws
// no tokens (it has none).
nlohmann::json play_values(const TokenConfig& tokens);

// Why `value` cannot be `setting`'s value, or "" when it can.
std::string play_setting_problem(const PlaySetting& setting, const nlohmann::json& value);

// `tokens` with `settings` (an object of some play settings' keys) applied. Throws
// wc::Error(where, ...) naming the key for a value that is not an object, an unknown key, a value
// that is not a number (an integer for an integer setting) or is out of range, or any key for a
// model that draws no tokens; `tokens` is never changed.
TokenConfig with_play_settings(const TokenConfig& tokens, const nlohmann::json& settings,
                               const std::string& where);

}  // namespace wc::model
