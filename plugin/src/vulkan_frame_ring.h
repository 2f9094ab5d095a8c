// A session's exportable Vulkan frame ring: one VkBuffer over one exportable allocation holding
// `slots` RGBA8 frames, and one timeline semaphore whose value n marks the n-th write complete.
// See Note [Vulkan frame hand-off] in vulkan_frame_ring.cpp.
#pragma once

#include <vulkan/vulkan.h>

#include <cstdint>
#include <memory>
#include <vector>

#include "plugin/src/vulkan_device.h"
#include "worldcast/worldcast.h"

namespace wc::plugin {

class VulkanFrameRing {
 public:
  // device_local: the ring lives in device-local memory and each frame is copied there from a
  // host-visible staging buffer on the plugin's queue; else it is host-visible and written by
  // memcpy. Throws PluginError(UNSUPPORTED) when the device cannot export such a buffer.
  VulkanFrameRing(std::shared_ptr<VulkanDevice> device, int width, int height, int slots,
                  bool device_local);
  ~VulkanFrameRing();
  VulkanFrameRing(const VulkanFrameRing&) = delete;
  VulkanFrameRing& operator=(const VulkanFrameRing&) = delete;

  // Writes a tightly packed RGBA8 frame into `slot` (which no reader may hold) and returns the
  // timeline value that is signalled once it is complete. Without an exportable semaphore it
  // returns only after the frame is complete.
  uint64_t write(int slot, const uint8_t* rgba);

  // Fills the export description with new fds (the caller owns them).
  void export_to(wc_vulkan_export& out) const;

  uint64_t slot_offset(int slot) const { return static_cast<uint64_t>(slot) * slot_stride_; }
  uint32_t row_pitch() const { return static_cast<uint32_t>(width_) * 4; }

 private:
  void create_ring_buffer();
  void create_staging();
  void create_fences();
  // Waits until the slot's previous write (if any) has finished on the plugin's queue.
  void wait_for_slot(size_t index);
  // Submits `commands` (0 or 1) signalling the timeline at value_ + 1 and the slot's fence.
  uint64_t submit(size_t index, const VkCommandBuffer* commands, uint32_t command_count);
  void destroy();

  std::shared_ptr<VulkanDevice> device_;
  int width_;
  int height_;
  int slots_;
  bool device_local_;
  VkDeviceSize frame_bytes_ = 0;
  VkDeviceSize slot_stride_ = 0;
  VkDeviceSize buffer_size_ = 0;
  VkBufferUsageFlags usage_ = 0;

  VkBuffer buffer_ = VK_NULL_HANDLE;
  VkDeviceMemory memory_ = VK_NULL_HANDLE;
  VkDeviceSize allocation_size_ = 0;
  uint32_t memory_type_ = 0;
  bool dedicated_ = false;
  void* mapped_ = nullptr;  // host-visible ring only

  VkSemaphore timeline_ = VK_NULL_HANDLE;
  uint64_t value_ = 0;  // the last value submitted to be signalled
  // One fence per slot, signalled with the slot's last submission: the plugin's own waits use
  // these and never the exported semaphore (Note [One signalling side]).
  std::vector<VkFence> fences_;
  std::vector<bool> fence_pending_;

  // Device-local ring: a host-visible staging buffer with the ring's layout and one command
  // buffer per slot.
  VkBuffer staging_ = VK_NULL_HANDLE;
  VkDeviceMemory staging_memory_ = VK_NULL_HANDLE;
  void* staging_mapped_ = nullptr;
  VkCommandPool pool_ = VK_NULL_HANDLE;
  std::vector<VkCommandBuffer> commands_;
  std::vector<bool> slot_written_;
};

}  // namespace wc::plugin
