// The CPU FrameSink: the slot ring lives in host-visible staging buffers filled by memcpy.
#pragma once

#include <condition_variable>
#include <memory>
#include <mutex>

#include "ui/frames/frame_sink.h"
#include "ui/vulkan/buffer.h"
#include "ui/vulkan/image.h"

namespace wc::ui {

namespace vk {
class Context;
}

class CpuFrameSink final : public FrameSink {
 public:
  // Creates the ring, the sampled image and a timeline semaphore; clears the image to black.
  CpuFrameSink(vk::Context& context, int width, int height);
  ~CpuFrameSink() override;

  int width() const override { return width_; }
  int height() const override { return height_; }
  void publish(const uint8_t* rgba, uint64_t frame_index) override;
  bool record_upload(VkCommandBuffer cmd, vk::SubmitSync* sync) override;
  VkImageView image_view() const override { return image_->view(); }
  uint64_t shown_frame_index() const override;

 private:
  // Note [Slot ownership]: a slot is either being written by the producer, the newest complete
  // frame, or free. A slot handed to the GPU carries `gpu_release`, the timeline value the
  // submission copying it signals; the producer waits for that value before writing the slot
  // again. With 3 slots the producer only ever waits when the renderer has two copies in flight.
  struct Slot {
    std::unique_ptr<vk::Buffer> staging;
    uint64_t frame_index = 0;
    uint64_t sequence = 0;  // publish count when it was filled (frame indices restart on reset)
    uint64_t gpu_release = 0;
    bool writing = false;
  };

  vk::Context& context_;
  int width_;
  int height_;
  std::unique_ptr<vk::Image> image_;
  VkSemaphore copies_done_ = VK_NULL_HANDLE;  // timeline: value n = the n-th upload finished

  mutable std::mutex mutex_;
  Slot slots_[kFrameSlots];
  int newest_ = -1;                    // slot holding the newest complete frame
  uint64_t published_ = 0;             // frames published so far
  uint64_t shown_sequence_ = 0;        // sequence of the frame in the sampled image
  uint64_t shown_frame_ = UINT64_MAX;  // its frame_index
  uint64_t uploads_recorded_ = 0;      // timeline value of the last recorded upload
};

}  // namespace wc::ui
