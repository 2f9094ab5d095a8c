// FrameSource -> FrameSink; see frame_producer.h.
#include "ui/frames/frame_producer.h"

#include <utility>

#include "engine/core/error.h"
#include "engine/core/timing.h"

namespace wc::ui {

FrameProducer::FrameProducer(FrameSource& source, FrameSink& sink, FrameRoute route)
    : source_(source), sink_(sink), route_(std::move(route)) {
  if (source.width() != sink.width() || source.height() != sink.height()) {
    throw Error("FrameProducer",
                "source " + source.name() + " is " + std::to_string(source.width()) + "x" +
                    std::to_string(source.height()) + " but the sink is " +
                    std::to_string(sink.width()) + "x" + std::to_string(sink.height()));
  }
}

void FrameProducer::reset(uint64_t seed) {
  Stopwatch watch;
  source_.reset(seed);
  publish();
  last_step_ms_ = watch.elapsed_ms();
}

void FrameProducer::step(Action action) {
  Stopwatch watch;
  source_.step(action);
  publish();
  last_step_ms_ = watch.elapsed_ms();
}

void FrameProducer::publish() {
  publish_frame(route_, source_, sink_);
}

}  // namespace wc::ui
