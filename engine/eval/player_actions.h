// Action sequences that look like a player's: each choice is held for a while (persistence),
// with occasional pauses. Pure functions of a seed, identical on every machine.
#pragma once

#include <cstdint>
#include <vector>

#include "engine/game/action.h"

namespace wc::eval {

struct PlayerActionOptions {
  int min_hold = 4;          // frames an action is held at least
  int max_hold = 24;         // and at most
  double idle_share = 0.15;  // share of holds that are `none`
};

// `count` actions from `seed`. Throws wc::Error for inconsistent options.
std::vector<game::Action> player_actions(uint64_t seed, int count,
                                         const PlayerActionOptions& options = {});

// The way back is game::opposite.
using game::opposite;

}  // namespace wc::eval
