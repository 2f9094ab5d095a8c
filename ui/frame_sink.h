// FrameSink: how produced frames reach the renderer. A ring of 3 slots written by the producer
// (today the render thread, later the inference thread) and a sampled image the present pass
// reads. The CPU path (cpu_frame_sink.h) fills host-visible staging buffers; the CUDA path will
// fill exported buffers and order them with a timeline semaphore, behind this same interface.
#pragma once

#include <vulkan/vulkan.h>

#include <cstdint>
#include <vector>

#include "ui/vulkan/submit.h"

namespace wc::ui {

inline constexpr int kFrameSlots = 3;

class FrameSink {
 public:
  virtual ~FrameSink() = default;

  virtual int width() const = 0;
  virtual int height() const = 0;

  // Producer side (any one thread). Stores a complete RGBA8 frame (width*height*4 bytes,
  // row-major) as the newest frame. Never writes a slot the GPU may still be reading: it may
  // wait for a recorded upload to finish, so when producer and renderer share a thread, submit
  // what record_upload recorded before publishing again.
  virtual void publish(const uint8_t* rgba, uint64_t frame_index) = 0;

  // Render thread. If a frame newer than the one in the sampled image is complete, records its
  // copy into the image (with the barriers around it) and adds what the submission must wait on
  // and signal to `sync`; returns whether it did. The image is left in
  // SHADER_READ_ONLY_OPTIMAL either way, so a slow producer just means the last frame is shown
  // again. The caller must submit the recorded commands with `sync`.
  virtual bool record_upload(VkCommandBuffer cmd, vk::SubmitSync* sync) = 0;

  // The sampled image (RGBA8 UNORM, optimal tiling) the present pass reads.
  virtual VkImageView image_view() const = 0;
  // frame_index of the frame in the sampled image once the last recorded upload has run;
  // UINT64_MAX before the first upload.
  virtual uint64_t shown_frame_index() const = 0;
};

}  // namespace wc::ui
