// Buffer allocation: one allocation per buffer (few, long-lived buffers; no allocator needed).
#include "ui/vulkan/buffer.h"

#include "ui/vulkan/check.h"
#include "ui/vulkan/context.h"

namespace wc::ui::vk {

Buffer::Buffer(const Context& context, VkDeviceSize size, VkBufferUsageFlags usage,
               VkMemoryPropertyFlags memory_flags)
    : device_(context.device()), size_(size) {
  VkBufferCreateInfo info{};
  info.sType = VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO;
  info.size = size;
  info.usage = usage;
  info.sharingMode = VK_SHARING_MODE_EXCLUSIVE;
  check(vkCreateBuffer(device_, &info, nullptr, &buffer_), "vkCreateBuffer");

  VkMemoryRequirements requirements{};
  vkGetBufferMemoryRequirements(device_, buffer_, &requirements);
  VkMemoryAllocateInfo alloc{};
  alloc.sType = VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO;
  alloc.allocationSize = requirements.size;
  try {
    alloc.memoryTypeIndex = context.find_memory_type(requirements.memoryTypeBits, memory_flags);
    check(vkAllocateMemory(device_, &alloc, nullptr, &memory_), "vkAllocateMemory");
    check(vkBindBufferMemory(device_, buffer_, memory_, 0), "vkBindBufferMemory");
    if (memory_flags & VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT) {
      check(vkMapMemory(device_, memory_, 0, VK_WHOLE_SIZE, 0, &mapped_), "vkMapMemory");
    }
  } catch (...) {
    if (memory_ != VK_NULL_HANDLE) vkFreeMemory(device_, memory_, nullptr);
    vkDestroyBuffer(device_, buffer_, nullptr);
    throw;
  }
}

Buffer::~Buffer() {
  if (mapped_) vkUnmapMemory(device_, memory_);
  vkDestroyBuffer(device_, buffer_, nullptr);
  vkFreeMemory(device_, memory_, nullptr);
}

}  // namespace wc::ui::vk
