// See frame_path.h. The only file outside cuda_frame_sink.cpp that knows whether CUDA was built.
#include "ui/frames/frame_path.h"

#include <cstring>

#include "engine/core/error.h"
#include "engine/core/log.h"
#include "ui/frames/cpu_frame_sink.h"
#include "ui/vulkan/context.h"

#ifdef WORLDCAST_HAS_CUDA
#include <cuda_runtime_api.h>

#include "ui/frames/cuda_frame_sink.h"
#endif

namespace wc::ui {

std::optional<FramePath> parse_frame_path(const std::string& text) {
  if (text == "cuda") return FramePath::kCuda;
  if (text == "cpu") return FramePath::kCpu;
  return std::nullopt;
}

const char* frame_path_name(FramePath path) {
  return path == FramePath::kCuda ? "cuda" : "cpu";
}

bool cuda_frame_path_built() {
#ifdef WORLDCAST_HAS_CUDA
  return true;
#else
  return false;
#endif
}

FramePath default_frame_path(bool frames_on_cuda) {
  return cuda_frame_path_built() && frames_on_cuda ? FramePath::kCuda : FramePath::kCpu;
}

FramePath resolve_frame_path(const std::string& flag, bool frames_on_cuda) {
  if (flag.empty()) return default_frame_path(frames_on_cuda);
  const std::optional<FramePath> path = parse_frame_path(flag);
  if (!path) throw Error("--frame-path", "expected cuda or cpu, got '" + flag + "'");
  return *path;
}

void configure_context(FramePath path, int cuda_device, vk::ContextOptions* options) {
  if (path != FramePath::kCuda) return;
  options->external_interop = true;
#ifdef WORLDCAST_HAS_CUDA
  cudaDeviceProp properties;
  std::memset(&properties, 0, sizeof(properties));
  if (cudaGetDeviceProperties(&properties, cuda_device) != cudaSuccess) {
    cudaGetLastError();  // clear it; make_frame_sink reports the failure
    return;
  }
  vk::DeviceUuid uuid{};
  std::memcpy(uuid.data(), properties.uuid.bytes, uuid.size());
  options->device_uuid = uuid;
#endif
}

FrameSinkChoice make_frame_sink(FramePath requested, vk::Context& context, int width, int height,
                                int cuda_device) {
  FrameSinkChoice choice;
  if (requested == FramePath::kCuda) {
#ifdef WORLDCAST_HAS_CUDA
    try {
      choice.sink = std::make_unique<CudaFrameSink>(context, width, height, cuda_device);
      choice.path = FramePath::kCuda;
      return choice;
    } catch (const Error& error) {
      choice.fallback_reason = error.what();
    }
#else
    choice.fallback_reason = "this build has no CUDA (configure with WORLDCAST_CUDA=ON)";
#endif
    log_warning("frame path: cuda unavailable, using cpu: ", choice.fallback_reason);
  }
  choice.sink = std::make_unique<CpuFrameSink>(context, width, height);
  choice.path = FramePath::kCpu;
  return choice;
}

}  // namespace wc::ui
