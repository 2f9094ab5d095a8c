// Action scripts: a documented text format naming one action per frame, for replays, headless
// runs, benchmarks and the plugin's example host.
//
// Format (UTF-8 text, one entry per line):
//   # a comment, to the end of the line; blank lines are ignored
//   right 12      an action name (see action.h) and an optional repeat count (1..1000000)
//   up            the same as "up 1"
// Anything else is an error naming the file and the line number.
#pragma once

#include <stdexcept>
#include <string>
#include <vector>

#include "engine/game/action.h"

namespace wc::game {

class ActionScriptError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Parses script text; `source_name` (a file name) is used in error messages: "NAME:LINE: ...".
std::vector<Action> parse_action_script(const std::string& text, const std::string& source_name);
// Reads and parses a file; a missing or unreadable file is an ActionScriptError naming it.
std::vector<Action> load_action_script(const std::string& path);
// The inverse of parse_action_script (run-length encoded), used when recording sessions.
std::string format_action_script(const std::vector<Action>& actions);

}  // namespace wc::game
