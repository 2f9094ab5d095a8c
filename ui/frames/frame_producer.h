// The producer side of the frame ring for single-threaded runs (headless): steps a FrameSource
// and publishes each frame into a FrameSink. The window plays through the inference thread
// (inference_thread.h) instead.
#pragma once

#include <cstdint>

#include "engine/rollout/frame_source.h"
#include "ui/frames/frame_route.h"
#include "ui/frames/frame_sink.h"

namespace wc::ui {

class FrameProducer {
 public:
  // `route.publish` hands each frame to the sink (empty: the source's RGBA8 bytes).
  FrameProducer(FrameSource& source, FrameSink& sink, FrameRoute route = {});

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
  FrameRoute route_;
  double last_step_ms_ = 0.0;
};

}  // namespace wc::ui
