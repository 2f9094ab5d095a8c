// The GPU frame path: Vulkan exports, CUDA imports, the convert kernel writes the slots. See
// Note [GPU slot ordering] in cuda_frame_sink.h.
#include "ui/frames/cuda_frame_sink.h"

#include <cuda_runtime_api.h>
#include <unistd.h>

#include <cstring>
#include <functional>
#include <string>

#include "engine/core/error.h"
#include "engine/core/log.h"
#include "ui/frames/cuda/rgba_convert.h"
#include "ui/vulkan/check.h"
#include "ui/vulkan/context.h"

namespace wc::ui {
namespace {

constexpr VkBufferUsageFlags kSlotUsage = VK_BUFFER_USAGE_TRANSFER_SRC_BIT;

void check_cuda(cudaError_t status, const char* what) {
  if (status != cudaSuccess) {
    throw Error("cuda frame path", std::string(what) + ": " + cudaGetErrorName(status) + " (" +
                                       cudaGetErrorString(status) + ")");
  }
}

// Makes `device` current for one call and restores the caller's device (the render and
// inference threads keep their own current device).
class DeviceGuard {
 public:
  explicit DeviceGuard(int device) {
    check_cuda(cudaGetDevice(&previous_), "cudaGetDevice");
    if (previous_ != device) check_cuda(cudaSetDevice(device), "cudaSetDevice");
    changed_ = previous_ != device;
  }
  ~DeviceGuard() {
    if (changed_) cudaSetDevice(previous_);
  }
  DeviceGuard(const DeviceGuard&) = delete;
  DeviceGuard& operator=(const DeviceGuard&) = delete;

 private:
  int previous_ = 0;
  bool changed_ = false;
};

}  // namespace

struct CudaFrameSink::Cuda {
  int device = 0;
  size_t slot_bytes = 0;
  cudaExternalMemory_t memory[kFrameSlots] = {};
  uint8_t* pixels[kFrameSlots] = {};
  cudaExternalSemaphore_t written = nullptr;
  cudaExternalSemaphore_t read_done = nullptr;
  cudaStream_t upload_stream = nullptr;  // publish() of host bytes
  cudaEvent_t last_signal = nullptr;     // recorded after the newest `written` signal
  cudaStream_t last_stream = nullptr;    // ... on this stream
  bool signalled = false;
  uint64_t signals = 0;  // `written` values handed out

  Cuda() = default;
  Cuda(const Cuda&) = delete;
  Cuda& operator=(const Cuda&) = delete;

  ~Cuda() {
    // Errors are ignored: destruction must not throw, and a failure only leaks the handle.
    if (written != nullptr) cudaDestroyExternalSemaphore(written);
    if (read_done != nullptr) cudaDestroyExternalSemaphore(read_done);
    for (int i = 0; i < kFrameSlots; ++i) {
      if (pixels[i] != nullptr) cudaFree(pixels[i]);  // how mapped buffers are released
      if (memory[i] != nullptr) cudaDestroyExternalMemory(memory[i]);
    }
    if (upload_stream != nullptr) cudaStreamDestroy(upload_stream);
    if (last_signal != nullptr) cudaEventDestroy(last_signal);
  }

  void import_slot(int slot, const vk::ExternalBuffer& buffer) {
    cudaExternalMemoryHandleDesc desc;
    std::memset(&desc, 0, sizeof(desc));
    desc.type = cudaExternalMemoryHandleTypeOpaqueFd;
    desc.handle.fd = buffer.export_fd();
    desc.size = buffer.allocation_size();
    desc.flags = buffer.dedicated() ? cudaExternalMemoryDedicated : 0;  // Note [Dedicated imports]
    const cudaError_t status = cudaImportExternalMemory(&memory[slot], &desc);
    if (status != cudaSuccess) {
      close(desc.handle.fd);  // CUDA owns the fd only after a successful import
      memory[slot] = nullptr;
      check_cuda(status, "cudaImportExternalMemory");
    }
    cudaExternalMemoryBufferDesc mapping;
    std::memset(&mapping, 0, sizeof(mapping));
    mapping.offset = 0;
    mapping.size = slot_bytes;
    void* pointer = nullptr;
    check_cuda(cudaExternalMemoryGetMappedBuffer(&pointer, memory[slot], &mapping),
               "cudaExternalMemoryGetMappedBuffer");
    pixels[slot] = static_cast<uint8_t*>(pointer);
  }

  static cudaExternalSemaphore_t import_timeline(const vk::ExternalTimeline& timeline) {
    cudaExternalSemaphoreHandleDesc desc;
    std::memset(&desc, 0, sizeof(desc));
    desc.type = cudaExternalSemaphoreHandleTypeTimelineSemaphoreFd;
    desc.handle.fd = timeline.export_fd();
    cudaExternalSemaphore_t semaphore = nullptr;
    const cudaError_t status = cudaImportExternalSemaphore(&semaphore, &desc);
    if (status != cudaSuccess) {
      close(desc.handle.fd);
      check_cuda(status, "cudaImportExternalSemaphore(timeline fd)");
    }
    return semaphore;
  }

  // Enqueues on `stream`: wait until the renderer released the slot, `write` the slot, signal
  // the next `written` value. Returns that value.
  uint64_t write_slot(uint64_t release, cudaStream_t stream,
                      const std::function<cudaError_t()>& write) {
    // A timeline never goes back: when publishes switch streams, the new stream first waits
    // for the previous signal so values are signalled in order.
    if (signalled && stream != last_stream) {
      check_cuda(cudaStreamWaitEvent(stream, last_signal, 0), "cudaStreamWaitEvent");
    }
    if (release > 0) {
      cudaExternalSemaphoreWaitParams wait;
      std::memset(&wait, 0, sizeof(wait));
      wait.params.fence.value = release;
      check_cuda(cudaWaitExternalSemaphoresAsync(&read_done, &wait, 1, stream),
                 "cudaWaitExternalSemaphoresAsync(read_done)");
    }
    check_cuda(write(), "writing the slot");
    const uint64_t value = ++signals;
    cudaExternalSemaphoreSignalParams signal;
    std::memset(&signal, 0, sizeof(signal));
    signal.params.fence.value = value;
    check_cuda(cudaSignalExternalSemaphoresAsync(&written, &signal, 1, stream),
               "cudaSignalExternalSemaphoresAsync(written)");
    check_cuda(cudaEventRecord(last_signal, stream), "cudaEventRecord");
    last_stream = stream;
    signalled = true;
    return value;
  }
};

CudaFrameSink::CudaFrameSink(vk::Context& context, int width, int height, int cuda_device)
    : context_(context), width_(width), height_(height) {
  if (width <= 0 || height <= 0) throw Error("CudaFrameSink", "frame size must be positive");
  int count = 0;
  check_cuda(cudaGetDeviceCount(&count), "cudaGetDeviceCount");
  if (cuda_device < 0 || cuda_device >= count) {
    throw Error("cuda frame path", "no CUDA device " + std::to_string(cuda_device) + " (" +
                                       std::to_string(count) + " present)");
  }
  cudaDeviceProp properties;
  std::memset(&properties, 0, sizeof(properties));
  check_cuda(cudaGetDeviceProperties(&properties, cuda_device), "cudaGetDeviceProperties");
  static_assert(sizeof(properties.uuid.bytes) == VK_UUID_SIZE, "CUDA and Vulkan UUID sizes");
  if (std::memcmp(properties.uuid.bytes, context.device_uuid().data(), VK_UUID_SIZE) != 0) {
    throw Error("cuda frame path", "the Vulkan device (" + context.device_name() +
                                       ") is not CUDA device " + std::to_string(cuda_device) +
                                       " (" + properties.name + "): their device UUIDs differ");
  }
  std::string reason = vk::ExternalBuffer::unsupported_reason(context, kSlotUsage);
  if (reason.empty()) reason = vk::ExternalTimeline::unsupported_reason(context);
  if (!reason.empty()) throw Error("cuda frame path", reason);

  DeviceGuard guard(cuda_device);
  cuda_ = std::make_unique<Cuda>();
  cuda_->device = cuda_device;
  cuda_->slot_bytes = static_cast<size_t>(width) * static_cast<size_t>(height) * 4;
  bool dedicated = false;
  for (int i = 0; i < kFrameSlots; ++i) {
    slots_[i].buffer = std::make_unique<vk::ExternalBuffer>(context, cuda_->slot_bytes, kSlotUsage);
    cuda_->import_slot(i, *slots_[i].buffer);
    dedicated = slots_[i].buffer->dedicated();
  }
  written_ = std::make_unique<vk::ExternalTimeline>(context);
  read_done_ = std::make_unique<vk::ExternalTimeline>(context);
  cuda_->written = Cuda::import_timeline(*written_);
  cuda_->read_done = Cuda::import_timeline(*read_done_);
  check_cuda(cudaStreamCreateWithFlags(&cuda_->upload_stream, cudaStreamNonBlocking),
             "cudaStreamCreateWithFlags");
  check_cuda(cudaEventCreateWithFlags(&cuda_->last_signal, cudaEventDisableTiming),
             "cudaEventCreateWithFlags");

  image_ = std::make_unique<vk::Image>(
      context, static_cast<uint32_t>(width), static_cast<uint32_t>(height),
      VK_FORMAT_R8G8B8A8_UNORM, VK_IMAGE_USAGE_SAMPLED_BIT | VK_IMAGE_USAGE_TRANSFER_DST_BIT);
  // Until the first frame arrives the present pass samples black, never undefined memory.
  context.submit_and_wait([&](VkCommandBuffer cmd) {
    vk::record_transition(cmd, image_->handle(),
                          {VK_IMAGE_LAYOUT_UNDEFINED, VK_IMAGE_LAYOUT_TRANSFER_DST_OPTIMAL,
                           VK_PIPELINE_STAGE_TOP_OF_PIPE_BIT, 0, VK_PIPELINE_STAGE_TRANSFER_BIT,
                           VK_ACCESS_TRANSFER_WRITE_BIT});
    const VkClearColorValue black{{0.0f, 0.0f, 0.0f, 1.0f}};
    const VkImageSubresourceRange range{VK_IMAGE_ASPECT_COLOR_BIT, 0, 1, 0, 1};
    vkCmdClearColorImage(cmd, image_->handle(), VK_IMAGE_LAYOUT_TRANSFER_DST_OPTIMAL, &black, 1,
                         &range);
    vk::record_transition(
        cmd, image_->handle(),
        {VK_IMAGE_LAYOUT_TRANSFER_DST_OPTIMAL, VK_IMAGE_LAYOUT_SHADER_READ_ONLY_OPTIMAL,
         VK_PIPELINE_STAGE_TRANSFER_BIT, VK_ACCESS_TRANSFER_WRITE_BIT,
         VK_PIPELINE_STAGE_FRAGMENT_SHADER_BIT, VK_ACCESS_SHADER_READ_BIT});
  });
  log_info("frame path: cuda (CUDA device ", cuda_device, " = ", context.device_name(), ", ", width,
           "x", height, ", ", dedicated ? "dedicated" : "suballocated", " exported memory)");
}

CudaFrameSink::~CudaFrameSink() {
  // No DeviceGuard here: it throws, and a destructor must not. Errors only leak handles.
  int previous = 0;
  cudaGetDevice(&previous);
  cudaSetDevice(cuda_->device);
  if (cuda_->signalled) {
    // Every publish is ordered before the last signal, so this waits for all CUDA-side work.
    // (It would wait forever for a slot release the render thread recorded but never
    // submitted; renderers submit what record_upload recorded.)
    cudaEventSynchronize(cuda_->last_signal);
  }
  vkDeviceWaitIdle(context_.device());
  cuda_.reset();
  cudaSetDevice(previous);
}

int CudaFrameSink::begin_write(uint64_t* release) {
  std::lock_guard<std::mutex> lock(mutex_);
  int target = -1;
  for (int i = 0; i < kFrameSlots; ++i) {
    if (i == newest_ || slots_[i].writing) continue;
    if (target < 0 || slots_[i].gpu_release < slots_[target].gpu_release) target = i;
  }
  if (target < 0) throw Error("CudaFrameSink", "no free slot (publish from one thread only)");
  slots_[target].writing = true;
  *release = slots_[target].gpu_release;
  return target;
}

void CudaFrameSink::end_write(int target, uint64_t frame_index, uint64_t written) {
  std::lock_guard<std::mutex> lock(mutex_);
  Slot& slot = slots_[target];
  slot.writing = false;
  if (written == 0) return;  // the write failed; the slot stays free, its content stale
  slot.frame_index = frame_index;
  slot.written = written;
  slot.sequence = ++published_;
  newest_ = target;
}

void CudaFrameSink::publish(const uint8_t* rgba, uint64_t frame_index) {
  std::lock_guard<std::mutex> producer(producer_mutex_);
  DeviceGuard guard(cuda_->device);
  uint64_t release = 0;
  const int target = begin_write(&release);
  uint64_t written = 0;
  try {
    cudaStream_t stream = cuda_->upload_stream;
    written = cuda_->write_slot(release, stream, [&] {
      return cudaMemcpyAsync(cuda_->pixels[target], rgba, cuda_->slot_bytes, cudaMemcpyHostToDevice,
                             stream);
    });
    // The caller may reuse `rgba` as soon as this returns.
    check_cuda(cudaStreamSynchronize(stream), "cudaStreamSynchronize");
  } catch (...) {
    end_write(target, frame_index, 0);
    throw;
  }
  end_write(target, frame_index, written);
}

void CudaFrameSink::publish_device(const DeviceFrame& frame, uint64_t frame_index) {
  if (frame.width != width_ || frame.height != height_) {
    throw Error("CudaFrameSink", "device frame is " + std::to_string(frame.width) + "x" +
                                     std::to_string(frame.height) + ", the sink " +
                                     std::to_string(width_) + "x" + std::to_string(height_));
  }
  if (frame.data == nullptr) throw Error("CudaFrameSink", "device frame has no data");
  if (frame.device != cuda_->device) {
    throw Error("CudaFrameSink", "device frame is on CUDA device " + std::to_string(frame.device) +
                                     ", the sink on " + std::to_string(cuda_->device));
  }
  cuda::RgbaConvertParams params;
  params.src = frame.data;
  params.src_type = frame.type == DeviceFrameType::kBFloat16 ? cuda::RgbaSourceType::kBFloat16
                                                             : cuda::RgbaSourceType::kFloat32;
  params.channel_stride = frame.channel_stride;
  params.row_stride = frame.row_stride;
  params.column_stride = frame.column_stride;
  params.width = width_;
  params.height = height_;

  std::lock_guard<std::mutex> producer(producer_mutex_);
  DeviceGuard guard(cuda_->device);
  uint64_t release = 0;
  const int target = begin_write(&release);
  params.dst = cuda_->pixels[target];
  uint64_t written = 0;
  try {
    cudaStream_t stream = static_cast<cudaStream_t>(frame.stream);
    written = cuda_->write_slot(release, stream,
                                [&] { return cuda::launch_rgba_convert(params, stream); });
  } catch (...) {
    end_write(target, frame_index, 0);
    throw;
  }
  end_write(target, frame_index, written);
}

bool CudaFrameSink::record_upload(VkCommandBuffer cmd, vk::SubmitSync* sync) {
  VkBuffer source = VK_NULL_HANDLE;
  uint64_t written = 0;
  uint64_t release = 0;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (newest_ < 0 || slots_[newest_].sequence == shown_sequence_) return false;
    Slot& slot = slots_[newest_];
    slot.gpu_release = ++uploads_recorded_;
    release = slot.gpu_release;
    written = slot.written;
    shown_sequence_ = slot.sequence;
    shown_frame_ = slot.frame_index;
    source = slot.buffer->handle();
  }
  // CUDA's kernel for this slot may still be running (or not yet started): wait on the GPU.
  sync->wait(written_->handle(), VK_PIPELINE_STAGE_TRANSFER_BIT, written);
  vk::record_acquire_from_external(cmd, source, context_.queue_family(),
                                   VK_PIPELINE_STAGE_TRANSFER_BIT, VK_ACCESS_TRANSFER_READ_BIT);
  // The previous present pass may still sample the image: wait for its fragment stage (WAR).
  vk::record_transition(
      cmd, image_->handle(),
      {VK_IMAGE_LAYOUT_SHADER_READ_ONLY_OPTIMAL, VK_IMAGE_LAYOUT_TRANSFER_DST_OPTIMAL,
       VK_PIPELINE_STAGE_FRAGMENT_SHADER_BIT, 0, VK_PIPELINE_STAGE_TRANSFER_BIT,
       VK_ACCESS_TRANSFER_WRITE_BIT});
  const VkBufferImageCopy region =
      vk::whole_image_copy(static_cast<uint32_t>(width_), static_cast<uint32_t>(height_));
  vkCmdCopyBufferToImage(cmd, source, image_->handle(), VK_IMAGE_LAYOUT_TRANSFER_DST_OPTIMAL, 1,
                         &region);
  vk::record_transition(
      cmd, image_->handle(),
      {VK_IMAGE_LAYOUT_TRANSFER_DST_OPTIMAL, VK_IMAGE_LAYOUT_SHADER_READ_ONLY_OPTIMAL,
       VK_PIPELINE_STAGE_TRANSFER_BIT, VK_ACCESS_TRANSFER_WRITE_BIT,
       VK_PIPELINE_STAGE_FRAGMENT_SHADER_BIT, VK_ACCESS_SHADER_READ_BIT});
  vk::record_release_to_external(cmd, source, context_.queue_family(),
                                 VK_PIPELINE_STAGE_TRANSFER_BIT, VK_ACCESS_TRANSFER_READ_BIT);
  // Signalled after every command of the submission: CUDA may then overwrite the slot.
  sync->signal(read_done_->handle(), release);
  return true;
}

uint64_t CudaFrameSink::shown_frame_index() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return shown_frame_;
}

}  // namespace wc::ui
