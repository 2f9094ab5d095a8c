// How frames travel from the source to the renderer, as hooks the viewer's LibTorch-free core
// calls: the CLI fills them from ui/frames/frame_path.h (`--frame-path cuda|cpu`); empty = the CPU
// path (a CpuFrameSink filled with the source's RGBA8 bytes).
#pragma once

#include <functional>
#include <memory>

#include "engine/rollout/frame_source.h"
#include "ui/frames/frame_sink.h"

namespace wc::ui {

namespace vk {
class Context;
struct ContextOptions;
}  // namespace vk

struct FrameRoute {
  // Adjusts the Vulkan context before it is made (the CUDA device's UUID, interop extensions).
  std::function<void(vk::ContextOptions*)> prepare_context;
  // Builds the frame sink for a width x height source.
  std::function<std::unique_ptr<FrameSink>(vk::Context&, int width, int height)> make_sink;
  // Hands the source's current frame to the sink (the producer thread, after each step).
  std::function<void(const FrameSource&, FrameSink&)> publish;
};

// `route.publish`, or sink.publish(source.rgba(), source.frame_index()) when it is empty.
inline void publish_frame(const FrameRoute& route, const FrameSource& source, FrameSink& sink) {
  if (route.publish) {
    route.publish(source, sink);
  } else {
    sink.publish(source.rgba(), source.frame_index());
  }
}

}  // namespace wc::ui
