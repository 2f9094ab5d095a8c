// The CUDA frame kind: a ring of device buffers filled on the plugin's own stream, and CUDA
// device lookup by UUID. Built from cuda_frames.cpp with WORLDCAST_CUDA, else from
// cuda_frames_stub.cpp (every call reports WC_RESULT_ERROR_UNSUPPORTED).
#pragma once

#include <cstdint>
#include <memory>

namespace wc::plugin {

class CudaFrameRing {
 public:
  virtual ~CudaFrameRing() = default;
  // Queues a copy of a tightly packed RGBA8 frame into `slot` on stream(); returns at once.
  virtual void write(int slot, const uint8_t* rgba) = 0;
  virtual uint64_t pointer(int slot) const = 0;  // the slot's device address
  virtual void* stream() const = 0;              // cudaStream_t
  virtual int device() const = 0;
};

bool cuda_built();
// Number of CUDA devices (0 in a CPU build or without a driver).
int cuda_device_count();
// The CUDA device whose UUID is `uuid` (16 bytes), or -1.
int cuda_device_for_uuid(const uint8_t* uuid);
// Throws PluginError(UNSUPPORTED) in a CPU build.
std::unique_ptr<CudaFrameRing> make_cuda_frame_ring(int device, int width, int height, int slots);

}  // namespace wc::plugin
