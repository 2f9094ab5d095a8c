// The interface the viewer, the CLI and the plugin draw frames from: the reference game today,
// the world-model Session as the second implementation. See DESIGN.md §5.
#pragma once

#include <cstdint>
#include <string>

#include "engine/game/action.h"

namespace wc {

using game::Action;

class FrameSource {
 public:
  virtual ~FrameSource() = default;

  virtual std::string name() const = 0;
  virtual int width() const = 0;
  virtual int height() const = 0;

  // Starts over from `seed`: the current frame becomes the first frame of that run.
  virtual void reset(uint64_t seed) = 0;
  // Produces the next frame under `action`.
  virtual void step(Action action) = 0;
  // The current frame: RGBA8, row-major, width() * height() * 4 bytes. Valid until the next
  // step() or reset().
  virtual const uint8_t* rgba() const = 0;
  // Frames produced since the last reset (0 right after reset()).
  virtual uint64_t frame_index() const = 0;
};

}  // namespace wc
