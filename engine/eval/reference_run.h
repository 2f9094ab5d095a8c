// The reference game driven alongside a Session: same world seed, stepped through the same
// seeding frames, so its frame after each step is the truth for the Session's generated frame.
#pragma once

#include <ATen/ATen.h>

#include <cstdint>

#include "engine/game/game.h"

namespace wc::eval {

class ReferenceRun {
 public:
  // Mirrors Session seeding: frame 0 after reset, then seed_frames − 1 steps of `none`; the
  // current frame is then the Session's last seed frame. Throws wc::Error unless
  // seed_frames >= 1 (without seeding the model's world is not the game's).
  ReferenceRun(int width, int height, uint64_t seed, int seed_frames);

  // Steps the game; returns whether the camera (= the player) moved.
  bool step(game::Action action);
  // The current frame, uint8 [H, W, 4].
  at::Tensor frame() const;
  // Whether walking `steps` frames in `direction` from the current state moves every frame
  // (asked of a copy; this run is unchanged).
  bool can_walk(game::Action direction, int steps) const;

  const game::Game& game() const { return game_; }

 private:
  game::Game game_;
};

}  // namespace wc::eval
