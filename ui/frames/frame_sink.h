// FrameSink: how produced frames reach the renderer. A ring of 3 slots written by the producer
// (today the render thread, later the inference thread) and a sampled image the present pass
// reads. The CPU path (cpu_frame_sink.h) fills host-visible staging buffers; the CUDA path
// (cuda_frame_sink.h) fills exported buffers ordered by timeline semaphores, behind this same
// interface. ui/frames/frame_path.h picks one.
#pragma once

#include <vulkan/vulkan.h>

#include <cstdint>
#include <vector>

#include "engine/core/error.h"
#include "ui/frames/device_frame.h"
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

  // Whether publish_device works: only the CUDA sink converts device frames itself, with no
  // copy to the host. Producers check this once and otherwise publish RGBA8 bytes.
  virtual bool accepts_device_frames() const { return false; }
  // Producer side, like publish(): converts `frame` to RGBA8 straight into a slot, ordered on
  // frame.stream (the call does not wait for the GPU). Throws wc::Error unless
  // accepts_device_frames().
  virtual void publish_device(const DeviceFrame& frame, uint64_t frame_index) {
    throw Error("frame sink", "this frame path takes RGBA8 bytes (publish), not device frames");
  }

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
