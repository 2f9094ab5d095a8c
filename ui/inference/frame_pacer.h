// How many frames the inference thread may generate as the display presents: one per presented
// frame, or a fixed number per second (Note [Game frame rate]).
#pragma once

#include <cstdint>

namespace wc::ui {

// Note [Game frame rate]: a step of the reference game moves 8 pixels (Note [One patch per
// step] in engine/game/game.h), so the game and its world model are meant to be watched at
// about 15 frames per second, not at the display's 60 Hz or more. With a rate, credits are
// earned on a clock: by t seconds after the first presented frame, floor(t * rate) credits in
// all. Credits a slow model could not spend are dropped (the inference thread banks at most
// two), so it never races to catch up. Without a rate (0), every presented frame earns one.
class FramePacer {
 public:
  // Throws std::invalid_argument for a negative or non-finite rate.
  explicit FramePacer(double frames_per_second = 0.0);

  // Credits earned by a frame presented at `seconds` (any clock; non-decreasing across calls).
  int64_t on_presented(double seconds);
  double frames_per_second() const { return rate_; }

 private:
  double rate_;
  bool started_ = false;
  double start_s_ = 0.0;
  int64_t earned_ = 0;
};

}  // namespace wc::ui
