// The player's per-frame command, shared by the game, the world model, scripts and the viewer.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

namespace wc::game {

enum class Action : uint8_t { kNone = 0, kUp = 1, kDown = 2, kLeft = 3, kRight = 4 };
inline constexpr int kActionCount = 5;

// "none", "up", "down", "left", "right".
const char* action_name(Action action);
// The way back: up <-> down, left <-> right, none stays none.
Action opposite(Action action);
// Accepts the names above (case-insensitive) and the single letters n/u/d/l/r.
std::optional<Action> parse_action(std::string_view text);

}  // namespace wc::game
