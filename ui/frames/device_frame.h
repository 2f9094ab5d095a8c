// A model frame that lives in CUDA memory, described by raw pointer, strides and stream so the
// frame path needs neither LibTorch nor CUDA headers to pass it on (ui/session_frame.h makes one
// from a Session; ui/frames/cuda_frame_sink.h consumes it).
#pragma once

#include <cstdint>

namespace wc::ui {

enum class DeviceFrameType { kFloat32, kBFloat16 };

// One frame [3, H, W] (planar RGB) in [-1, 1], as the world model produces it.
struct DeviceFrame {
  const void* data = nullptr;
  DeviceFrameType type = DeviceFrameType::kFloat32;
  int width = 0;
  int height = 0;
  // Element strides of the channel, row and column dimensions.
  int64_t channel_stride = 0;
  int64_t row_stride = 0;
  int64_t column_stride = 1;
  int device = 0;          // CUDA device ordinal
  void* stream = nullptr;  // cudaStream_t on which `data` becomes ready (nullptr: legacy default)
};

}  // namespace wc::ui
