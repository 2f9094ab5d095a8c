// See player_actions.h. SplitMix64 (game::mix64) instead of <random> distributions, whose
// outputs differ between standard libraries.
#include "engine/eval/player_actions.h"

#include "engine/core/error.h"
#include "engine/game/hash.h"

namespace wc::eval {

std::vector<game::Action> player_actions(uint64_t seed, int count,
                                         const PlayerActionOptions& options) {
  if (count < 0 || options.min_hold < 1 || options.max_hold < options.min_hold ||
      !(options.idle_share >= 0.0 && options.idle_share <= 1.0)) {
    throw Error("player actions",
                "need count >= 0, 1 <= min_hold <= max_hold, idle_share in [0, 1]");
  }
  uint64_t state = game::mix64(seed ^ 0x706C61796572ull);  // "player"
  const auto next = [&state] { return state = game::mix64(state); };
  const auto unit = [&next] { return static_cast<double>(next() >> 11) * 0x1.0p-53; };
  std::vector<game::Action> actions;
  actions.reserve(static_cast<size_t>(count));
  while (static_cast<int>(actions.size()) < count) {
    const uint64_t span = static_cast<uint64_t>(options.max_hold - options.min_hold + 1);
    const int hold = options.min_hold + static_cast<int>(next() % span);
    const game::Action action = unit() < options.idle_share
                                    ? game::Action::kNone
                                    : static_cast<game::Action>(1 + next() % 4);
    for (int i = 0; i < hold && static_cast<int>(actions.size()) < count; ++i) {
      actions.push_back(action);
    }
  }
  return actions;
}

}  // namespace wc::eval
