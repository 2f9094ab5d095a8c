// Action names and their parsing, shared by scripts, the CLI and the viewer's key map.
#include "engine/game/action.h"

#include <cctype>
#include <string>

namespace wc::game {

const char* action_name(Action action) {
  switch (action) {
    case Action::kNone:
      return "none";
    case Action::kUp:
      return "up";
    case Action::kDown:
      return "down";
    case Action::kLeft:
      return "left";
    case Action::kRight:
      return "right";
  }
  return "none";
}

Action opposite(Action action) {
  switch (action) {
    case Action::kUp:
      return Action::kDown;
    case Action::kDown:
      return Action::kUp;
    case Action::kLeft:
      return Action::kRight;
    case Action::kRight:
      return Action::kLeft;
    case Action::kNone:
      break;
  }
  return Action::kNone;
}

std::optional<Action> parse_action(std::string_view text) {
  std::string lower(text);
  for (char& c : lower) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  if (lower == "none" || lower == "n") return Action::kNone;
  if (lower == "up" || lower == "u" || lower == "w") return Action::kUp;
  // "d" is down (the n/u/d/l/r set), not WASD's right: one letter cannot mean both, and the
  // spelled-out set is the documented primary one. WASD's right is only reachable as "right"/"r".
  if (lower == "down" || lower == "d" || lower == "s") return Action::kDown;
  if (lower == "left" || lower == "l" || lower == "a") return Action::kLeft;
  if (lower == "right" || lower == "r") return Action::kRight;
  return std::nullopt;
}

}  // namespace wc::game
