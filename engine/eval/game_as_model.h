// The reference game dressed as an eval source: seeded like a Session, it is the perfect world
// model, so every metric it scores is the ceiling a trained model is read against (and a check
// of the eval harness itself: responsiveness 100%, idle fidelity at the PSNR cap).
#pragma once

#include <cstdint>
#include <memory>

#include "engine/rollout/frame_source.h"

namespace wc::eval {

// A FrameSource whose reset(seed) shows the game's frame seed_frames − 1 (after seed_frames − 1
// steps of none), as a Session seeded with seed_frames real frames shows its last seed frame.
std::unique_ptr<FrameSource> make_game_as_model(int width, int height, int seed_frames,
                                                uint64_t seed);

}  // namespace wc::eval
