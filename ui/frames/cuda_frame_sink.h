// The GPU FrameSink (DESIGN.md §9): the slot ring lives in exportable Vulkan buffers imported
// into CUDA, the convert kernel writes RGBA8 straight into a slot, and two timeline semaphores
// shared with CUDA order writer and reader. No frame ever touches host memory. Built only with
// WORLDCAST_CUDA; make_frame_sink (frame_path.h) falls back to the CPU sink when it throws.
#pragma once

#include <memory>
#include <mutex>

#include "ui/frames/frame_sink.h"
#include "ui/vulkan/external_buffer.h"
#include "ui/vulkan/external_timeline.h"
#include "ui/vulkan/image.h"

namespace wc::ui {

namespace vk {
class Context;
}

class CudaFrameSink final : public FrameSink {
 public:
  // Throws wc::Error naming the step that failed (missing extension, device UUID mismatch,
  // CUDA import) so the caller can log it and fall back to CpuFrameSink.
  CudaFrameSink(vk::Context& context, int width, int height, int cuda_device);
  ~CudaFrameSink() override;

  int width() const override { return width_; }
  int height() const override { return height_; }
  // Host bytes still work (the reference game on this path): an upload into the slot on the
  // sink's own stream, finished before returning.
  void publish(const uint8_t* rgba, uint64_t frame_index) override;
  bool accepts_device_frames() const override { return true; }
  void publish_device(const DeviceFrame& frame, uint64_t frame_index) override;
  bool record_upload(VkCommandBuffer cmd, vk::SubmitSync* sync) override;
  VkImageView image_view() const override { return image_->view(); }
  uint64_t shown_frame_index() const override;

 private:
  // Note [GPU slot ordering]: as Note [Slot ownership] (cpu_frame_sink.h), but both waits run on
  // GPUs. `written` (CUDA signals, Vulkan waits): publish n signals n after its kernel, and the
  // submission copying that slot waits for n. `read_done` (Vulkan signals, CUDA waits): the
  // submission copying a slot signals its upload count, stored as the slot's gpu_release, and a
  // publish that reuses the slot first makes its stream wait for that value. So a producer far
  // ahead of the display waits on the GPU, never the host, and a producer behind it (frame not
  // yet computed when published) makes the copy wait instead of reading stale bytes.
  struct Slot {
    std::unique_ptr<vk::ExternalBuffer> buffer;
    uint64_t frame_index = 0;
    uint64_t sequence = 0;     // publish count when it was filled
    uint64_t written = 0;      // `written` value signalled once its bytes are complete
    uint64_t gpu_release = 0;  // `read_done` value after which it may be overwritten
    bool writing = false;
  };
  struct Cuda;  // imported handles, stream and events (CUDA types stay out of this header)

  int begin_write(uint64_t* release);
  void end_write(int target, uint64_t frame_index, uint64_t written);

  vk::Context& context_;
  int width_;
  int height_;
  std::unique_ptr<vk::Image> image_;
  std::unique_ptr<vk::ExternalTimeline> written_;
  std::unique_ptr<vk::ExternalTimeline> read_done_;

  std::mutex producer_mutex_;  // one publish at a time (CUDA-side state below is the producer's)
  mutable std::mutex mutex_;   // slot bookkeeping shared with the render thread
  Slot slots_[kFrameSlots];
  int newest_ = -1;
  uint64_t published_ = 0;
  uint64_t shown_sequence_ = 0;
  uint64_t shown_frame_ = UINT64_MAX;
  uint64_t uploads_recorded_ = 0;
  // Last, so the CUDA imports are released before the Vulkan memory they map.
  std::unique_ptr<Cuda> cuda_;
};

}  // namespace wc::ui
