// See source_publish.h.
#include "ui/frames/source_publish.h"

#ifdef WORLDCAST_HAS_CUDA
#include <c10/cuda/CUDAStream.h>
#endif

#include "engine/core/error.h"
#include "engine/rollout/session.h"

namespace wc::ui {
namespace {

const rollout::Session* cuda_session(const FrameSource& source) {
  const auto* session = dynamic_cast<const rollout::Session*>(&source);
  return session != nullptr && session->device().is_cuda() ? session : nullptr;
}

}  // namespace

bool publishes_device_frames(const FrameSource& source, const FrameSink& sink) {
  return sink.accepts_device_frames() && cuda_session(source) != nullptr;
}

bool route_frames_to_device(FrameSource& source, const FrameSink& sink) {
  if (!publishes_device_frames(source, sink)) return false;
  static_cast<rollout::Session&>(source).set_host_frames(false);
  return true;
}

void publish_source_frame(const FrameSource& source, FrameSink& sink) {
  if (sink.accepts_device_frames()) {
    if (const rollout::Session* session = cuda_session(source)) {
      sink.publish_device(device_frame_of(session->frame_on_device()), session->frame_index());
      return;
    }
  }
  sink.publish(source.rgba(), source.frame_index());
}

DeviceFrame device_frame_of(const at::Tensor& frame) {
  if (frame.dim() != 3 || frame.size(0) != 3) {
    throw Error("device frame",
                "expected a frame [3, H, W], got " + std::to_string(frame.dim()) + " dimensions");
  }
  if (!frame.is_cuda()) throw Error("device frame", "the frame is not in CUDA memory");
  DeviceFrame out;
  if (frame.scalar_type() == at::kFloat) {
    out.type = DeviceFrameType::kFloat32;
  } else if (frame.scalar_type() == at::kBFloat16) {
    out.type = DeviceFrameType::kBFloat16;
  } else {
    throw Error("device frame", "expected float32 or bfloat16 values");
  }
  out.data = frame.data_ptr();
  out.height = static_cast<int>(frame.size(1));
  out.width = static_cast<int>(frame.size(2));
  out.channel_stride = frame.stride(0);
  out.row_stride = frame.stride(1);
  out.column_stride = frame.stride(2);
  out.device = frame.device().index();
#ifdef WORLDCAST_HAS_CUDA
  out.stream = c10::cuda::getCurrentCUDAStream(frame.device().index()).stream();
#else
  throw Error("device frame", "this build has no CUDA (configure with WORLDCAST_CUDA=ON)");
#endif
  return out;
}

}  // namespace wc::ui
