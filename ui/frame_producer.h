// The producer side of the frame ring: steps a FrameSource and publishes each frame into a
// FrameSink. Today the render thread calls it between frames; when the world model moves to its
// own inference thread (DESIGN.md §4) that thread owns this object and nothing else changes.
#pragma once

#include <cstdint>

#include "engine/rollout/frame_source.h"
#include "ui/frame_sink.h"

namespace wc::ui {

class FrameProducer {
 public:
  FrameProducer(FrameSource& source, FrameSink& sink);

  // Starts the source over from `seed` and publishes its first frame.
  void reset(uint64_t seed);
  // Produces the next frame under `action` and publishes it.
  void step(Action action);

  const FrameSource& source() const { return source_; }
  // Wall time of the last step (source + publish), for the panel and run.json.
  double last_step_ms() const { return last_step_ms_; }

 private:
  void publish();

  FrameSource& source_;
  FrameSink& sink_;
  double last_step_ms_ = 0.0;
};

}  // namespace wc::ui
