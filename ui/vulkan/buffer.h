// A VkBuffer with its own memory; host-visible buffers stay mapped for their whole life.
#pragma once

#include <vulkan/vulkan.h>

#include <cstddef>

namespace wc::ui::vk {

class Context;

class Buffer {
 public:
  // `memory_flags` including HOST_VISIBLE maps the buffer (it must then also be HOST_COHERENT,
  // so no flush/invalidate calls are needed).
  Buffer(const Context& context, VkDeviceSize size, VkBufferUsageFlags usage,
         VkMemoryPropertyFlags memory_flags);
  ~Buffer();
  Buffer(const Buffer&) = delete;
  Buffer& operator=(const Buffer&) = delete;

  VkBuffer handle() const { return buffer_; }
  VkDeviceSize size() const { return size_; }
  // The mapped bytes, or nullptr for device-local buffers.
  void* mapped() const { return mapped_; }

 private:
  VkDevice device_ = VK_NULL_HANDLE;
  VkBuffer buffer_ = VK_NULL_HANDLE;
  VkDeviceMemory memory_ = VK_NULL_HANDLE;
  VkDeviceSize size_ = 0;
  void* mapped_ = nullptr;
};

// Host-visible, coherent, mapped: staging uploads and readbacks.
inline constexpr VkMemoryPropertyFlags kHostMemory =
    VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT | VK_MEMORY_PROPERTY_HOST_COHERENT_BIT;

}  // namespace wc::ui::vk
