// The reference game as a FrameSource (the viewer's default until the neural game is bundled).
#pragma once

#include <cstdint>
#include <memory>

#include "engine/rollout/frame_source.h"

namespace wc {

// A FrameSource that plays engine/game at width x height from `seed`.
std::unique_ptr<FrameSource> make_game_source(int width, int height, uint64_t seed);

}  // namespace wc
