// Measuring how fast the game renders: the core of `worldcast bench game`. The game must keep up
// with dataset recording and evaluation, so this is checked against thousands of frames/s.
#pragma once

#include <cstdint>

#include "engine/game/action.h"

namespace wc::game {

struct ThroughputOptions {
  int64_t frames = 20000;
  int width = 128;
  int height = 128;
  uint64_t seed = 0;
};

struct ThroughputResult {
  int64_t frames = 0;
  int width = 0;
  int height = 0;
  double seconds = 0.0;
  double frames_per_second = 0.0;
  double ms_per_frame = 0.0;
  int crystals_collected = 0;
  uint64_t last_frame_hash = 0;  // same options => same hash, a cheap determinism check
};

// The benchmark's action for frame `index`: runs of 24 frames of one action (mostly walking,
// sometimes standing), chosen by hashing the run number, so the camera keeps scrolling.
Action throughput_action(int64_t index);

// Steps a fresh game `options.frames` times on the calling thread and times it (construction and
// the first render excluded). Throws std::invalid_argument for frames < 1 or a bad frame size.
ThroughputResult measure_throughput(const ThroughputOptions& options);

}  // namespace wc::game
