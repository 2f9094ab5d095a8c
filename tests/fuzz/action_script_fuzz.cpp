// libFuzzer target: arbitrary bytes parsed as an action script. The parser must either refuse
// them with ActionScriptError (no other exception, no crash) or return actions that the writer
// formats back into a script parsing to the same actions. Built by run_fuzz.sh.
#include <cstdint>
#include <cstdlib>
#include <string>

#include "engine/game/action_script.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  std::vector<wc::game::Action> actions;
  try {
    actions = wc::game::parse_action_script(text, "fuzz.txt");
  } catch (const wc::game::ActionScriptError& e) {
    // An error names the file and the line, and never echoes a control character.
    const std::string what = e.what();
    if (what.rfind("fuzz.txt:", 0) != 0) std::abort();
    for (char c : what) {
      const auto byte = static_cast<unsigned char>(c);
      if (byte < 0x20 || byte == 0x7F) std::abort();
    }
    return 0;
  }
  if (wc::game::parse_action_script(wc::game::format_action_script(actions), "again") != actions) {
    std::abort();
  }
  return 0;
}
