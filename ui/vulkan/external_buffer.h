// A device-local VkBuffer whose memory is exportable as an opaque POSIX fd, so another API (CUDA)
// or another VkDevice can write it: one slot of the GPU frame ring (DESIGN.md §9).
#pragma once

#include <vulkan/vulkan.h>

#include <cstdint>
#include <string>

namespace wc::ui::vk {

class Context;

class ExternalBuffer {
 public:
  // Why `context` cannot make such a buffer ("" when it can): extension not enabled (see
  // ContextOptions::external_interop) or opaque-fd export not offered for these usages.
  static std::string unsupported_reason(const Context& context, VkBufferUsageFlags usage);

  // Throws wc::Error naming the failed call or the missing capability.
  ExternalBuffer(const Context& context, VkDeviceSize size, VkBufferUsageFlags usage);
  ~ExternalBuffer();
  ExternalBuffer(const ExternalBuffer&) = delete;
  ExternalBuffer& operator=(const ExternalBuffer&) = delete;

  VkBuffer handle() const { return buffer_; }
  VkDeviceSize size() const { return size_; }
  // The size of the memory object (>= size()): what an importer must be told.
  VkDeviceSize allocation_size() const { return allocation_size_; }
  // Whether the memory is a dedicated allocation. See Note [Dedicated imports].
  bool dedicated() const { return dedicated_; }
  // Its memory type: a Vulkan importer of an opaque fd must allocate with the same one.
  uint32_t memory_type_index() const { return memory_type_index_; }

  // A new fd for the memory; the caller owns it (an importer that succeeds takes it over).
  int export_fd() const;

 private:
  VkDevice device_ = VK_NULL_HANDLE;
  VkBuffer buffer_ = VK_NULL_HANDLE;
  VkDeviceMemory memory_ = VK_NULL_HANDLE;
  VkDeviceSize size_ = 0;
  VkDeviceSize allocation_size_ = 0;
  bool dedicated_ = false;
  uint32_t memory_type_index_ = 0;
};

// Note [External ownership]: an exported buffer is written outside this VkDevice, so each use
// is bracketed by queue-family ownership transfers from and back to VK_QUEUE_FAMILY_EXTERNAL
// (the spec asks for them; validation does not notice their absence, see research/systems.md).
// `stage`/`access` describe this device's use of the buffer between the two barriers.
void record_acquire_from_external(VkCommandBuffer cmd, VkBuffer buffer, uint32_t queue_family,
                                  VkPipelineStageFlags stage, VkAccessFlags access);
void record_release_to_external(VkCommandBuffer cmd, VkBuffer buffer, uint32_t queue_family,
                                VkPipelineStageFlags stage, VkAccessFlags access);

}  // namespace wc::ui::vk
