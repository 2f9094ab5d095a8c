// The CUDA frame kind (WORLDCAST_CUDA builds only): see cuda_frames.h. The Session decodes
// frames on the CPU today, so a CUDA frame is an upload from pinned memory on the plugin's own
// non-blocking stream; the host orders its reads after that stream.
#include <cuda_runtime_api.h>

#include <cstring>
#include <string>
#include <vector>

#include "plugin/src/cuda_frames.h"
#include "plugin/src/plugin_error.h"

namespace wc::plugin {
namespace {

void cuda_check(cudaError_t status, const char* what) {
  if (status == cudaSuccess) return;
  const wc_result code = status == cudaErrorMemoryAllocation ? WC_RESULT_ERROR_OUT_OF_MEMORY
                                                             : WC_RESULT_ERROR_INTERNAL;
  throw PluginError(code, std::string(what) + ": " + cudaGetErrorString(status));
}

// Makes `device` current for a scope and restores the host's current device afterwards, so the
// plugin never changes the host thread's CUDA state.
class DeviceScope {
 public:
  explicit DeviceScope(int device) {
    cuda_check(cudaGetDevice(&previous_), "cudaGetDevice");
    cuda_check(cudaSetDevice(device), "cudaSetDevice");
  }
  ~DeviceScope() { cudaSetDevice(previous_); }
  DeviceScope(const DeviceScope&) = delete;
  DeviceScope& operator=(const DeviceScope&) = delete;

 private:
  int previous_ = 0;
};

class CudaRing final : public CudaFrameRing {
 public:
  CudaRing(int device, int width, int height, int slots)
      : device_(device), bytes_(static_cast<size_t>(width) * static_cast<size_t>(height) * 4) {
    DeviceScope scope(device_);
    try {
      cuda_check(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking), "cudaStreamCreate");
      for (int i = 0; i < slots; ++i) {
        void* device_ptr = nullptr;
        cuda_check(cudaMalloc(&device_ptr, bytes_), "cudaMalloc (frame ring)");
        device_ptrs_.push_back(device_ptr);
        void* host_ptr = nullptr;
        cuda_check(cudaMallocHost(&host_ptr, bytes_), "cudaMallocHost (frame ring)");
        pinned_.push_back(host_ptr);
        cudaEvent_t event = nullptr;
        cuda_check(cudaEventCreateWithFlags(&event, cudaEventDisableTiming), "cudaEventCreate");
        copied_.push_back(event);
      }
    } catch (...) {
      release();
      throw;
    }
  }
  ~CudaRing() override {
    // Destruction must not throw; a failure here only leaks.
    int previous = 0;
    if (cudaGetDevice(&previous) != cudaSuccess) return;
    if (cudaSetDevice(device_) != cudaSuccess) return;
    release();
    cudaSetDevice(previous);
  }
  CudaRing(const CudaRing&) = delete;
  CudaRing& operator=(const CudaRing&) = delete;

  void write(int slot, const uint8_t* rgba) override {
    DeviceScope scope(device_);
    const size_t i = static_cast<size_t>(slot);
    // The slot's previous upload reads pinned_[i]: it must be done before we overwrite it.
    cuda_check(cudaEventSynchronize(copied_[i]), "cudaEventSynchronize");
    std::memcpy(pinned_[i], rgba, bytes_);
    cuda_check(
        cudaMemcpyAsync(device_ptrs_[i], pinned_[i], bytes_, cudaMemcpyHostToDevice, stream_),
        "cudaMemcpyAsync (frame upload)");
    cuda_check(cudaEventRecord(copied_[i], stream_), "cudaEventRecord");
  }
  uint64_t pointer(int slot) const override {
    return reinterpret_cast<uint64_t>(device_ptrs_[static_cast<size_t>(slot)]);
  }
  void* stream() const override { return stream_; }
  int device() const override { return device_; }

 private:
  void release() {
    if (stream_) cudaStreamSynchronize(stream_);
    for (cudaEvent_t event : copied_) cudaEventDestroy(event);
    for (void* ptr : pinned_) cudaFreeHost(ptr);
    for (void* ptr : device_ptrs_) cudaFree(ptr);
    if (stream_) cudaStreamDestroy(stream_);
    copied_.clear();
    pinned_.clear();
    device_ptrs_.clear();
    stream_ = nullptr;
  }

  int device_;
  size_t bytes_;
  cudaStream_t stream_ = nullptr;
  std::vector<void*> device_ptrs_;
  std::vector<void*> pinned_;
  std::vector<cudaEvent_t> copied_;
};

}  // namespace

bool cuda_built() {
  return true;
}

int cuda_device_count() {
  int count = 0;
  if (cudaGetDeviceCount(&count) != cudaSuccess) {
    cudaGetLastError();  // clear the error so later calls do not see it
    return 0;
  }
  return count;
}

int cuda_device_for_uuid(const uint8_t* uuid) {
  const int count = cuda_device_count();
  for (int i = 0; i < count; ++i) {
    cudaDeviceProp properties{};
    if (cudaGetDeviceProperties(&properties, i) != cudaSuccess) continue;
    if (std::memcmp(properties.uuid.bytes, uuid, 16) == 0) return i;
  }
  return -1;
}

std::unique_ptr<CudaFrameRing> make_cuda_frame_ring(int device, int width, int height, int slots) {
  return std::make_unique<CudaRing>(device, width, height, slots);
}

}  // namespace wc::plugin
