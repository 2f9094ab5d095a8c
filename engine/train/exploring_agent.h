// The exploring agent that plays the reference game to make training data: persistent random
// walks, wall following when blocked (or, for a share of obstacles, leaning on the key as a player
// does), idling, and return trips over its own path so that the model sees places again (memory
// matters). Deterministic for a seed.
#pragma once

#include <cstdint>
#include <random>
#include <vector>

#include "engine/game/action.h"
#include "engine/game/game.h"

namespace wc::train {

struct AgentStyle {
  double mean_hold_frames = 10.0;  // a chosen direction is kept this long on average
  double idle_share = 0.15;        // decisions that stand still (action none) ...
  double mean_idle_frames = 6.0;   // ... for this long on average
  double return_share = 0.15;      // decisions that walk back over the last moves
  int max_return_frames = 24;      // the longest return trip
  // Obstacles the agent keeps pushing into for the rest of its hold instead of turning along
  // them, so that the data shows the view held under a held key as a player shows it.
  double push_share = 0.0;
};

class ExploringAgent {
 public:
  explicit ExploringAgent(uint64_t seed, AgentStyle style = {});

  // The action for the next frame of `game`; it reads whether the last move was blocked.
  game::Action next(const game::Game& game);

 private:
  void decide();
  int draw_duration(double mean);

  AgentStyle style_;
  std::mt19937_64 rng_;
  game::Action current_ = game::Action::kNone;
  int remaining_ = 0;
  std::vector<game::Action> moves_;   // every move made, newest last (bounded)
  std::vector<game::Action> return_;  // a return trip still to walk, next last
  game::Action last_ = game::Action::kNone;
  game::Action pushing_ = game::Action::kNone;  // the key leant on against an obstacle, if any
};

using game::opposite;  // the action that undoes a move

}  // namespace wc::train
