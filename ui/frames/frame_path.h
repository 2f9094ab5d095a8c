// Which path carries frames from the producer to the renderer (`--frame-path cuda|cpu`), and the
// factory that builds its FrameSink: the CUDA path when asked for and possible, else the CPU path
// with the reason logged (DESIGN.md §9).
#pragma once

#include <memory>
#include <optional>
#include <string>

#include "ui/frames/frame_sink.h"

namespace wc::ui {

namespace vk {
class Context;
struct ContextOptions;
}  // namespace vk

enum class FramePath { kCpu, kCuda };

std::optional<FramePath> parse_frame_path(const std::string& text);
const char* frame_path_name(FramePath path);
// What `--frame-path` means when not given: cuda when this build has CUDA and the frames are
// made on a CUDA device, else cpu.
FramePath default_frame_path(bool frames_on_cuda);
// The value of `--frame-path` ("" = default_frame_path(frames_on_cuda)); throws
// wc::Error("--frame-path", ...) for anything but cuda, cpu or "".
FramePath resolve_frame_path(const std::string& flag, bool frames_on_cuda);
// Whether this build has the CUDA path at all (WORLDCAST_CUDA).
bool cuda_frame_path_built();

// Prepares the Vulkan context for `path` before it is created: for kCuda, the CUDA device's UUID
// as the preferred physical device and the interop extensions. Does nothing for kCpu, in a build
// without CUDA, or when CUDA has no such device (make_frame_sink then reports why).
void configure_context(FramePath path, int cuda_device, vk::ContextOptions* options);

struct FrameSinkChoice {
  std::unique_ptr<FrameSink> sink;
  FramePath path = FramePath::kCpu;  // the path actually built
  std::string fallback_reason;       // why kCuda was asked for but not built; "" otherwise
};

// Builds the sink for `requested`; kCuda falls back to the CPU sink, logging the reason, when
// the build has no CUDA or any step of the CUDA path fails (see cuda_frame_sink.h).
FrameSinkChoice make_frame_sink(FramePath requested, vk::Context& context, int width, int height,
                                int cuda_device = 0);

}  // namespace wc::ui
