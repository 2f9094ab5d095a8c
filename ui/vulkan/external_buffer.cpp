// Exportable buffer memory (opaque fd) and the ownership barriers around its use; see
// external_buffer.h.
#include "ui/vulkan/external_buffer.h"

#include "engine/core/error.h"
#include "ui/vulkan/check.h"
#include "ui/vulkan/context.h"

namespace wc::ui::vk {
namespace {

constexpr VkExternalMemoryHandleTypeFlagBits kHandleType =
    VK_EXTERNAL_MEMORY_HANDLE_TYPE_OPAQUE_FD_BIT;

VkExternalMemoryProperties external_properties(const Context& context, VkBufferUsageFlags usage) {
  VkPhysicalDeviceExternalBufferInfo info{};
  info.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_EXTERNAL_BUFFER_INFO;
  info.usage = usage;
  info.handleType = kHandleType;
  VkExternalBufferProperties properties{};
  properties.sType = VK_STRUCTURE_TYPE_EXTERNAL_BUFFER_PROPERTIES;
  vkGetPhysicalDeviceExternalBufferProperties(context.physical_device(), &info, &properties);
  return properties.externalMemoryProperties;
}

}  // namespace

std::string ExternalBuffer::unsupported_reason(const Context& context, VkBufferUsageFlags usage) {
  if (!context.has_device_extension(VK_KHR_EXTERNAL_MEMORY_FD_EXTENSION_NAME)) {
    return context.device_name() + " has no VK_KHR_external_memory_fd enabled";
  }
  if (!(external_properties(context, usage).externalMemoryFeatures &
        VK_EXTERNAL_MEMORY_FEATURE_EXPORTABLE_BIT)) {
    return context.device_name() + " cannot export buffer memory as an opaque fd";
  }
  return "";
}

// Note [Dedicated imports]
// CUDA must be told whether the memory it imports is a dedicated Vulkan allocation
// (cudaExternalMemoryDedicated); a wrong flag is not rejected but corrupts what is read. So the
// decision is made once, here, and importers read dedicated() instead of deciding again. We
// allocate dedicated memory whenever the driver requires or prefers it or only exports
// dedicated allocations.
ExternalBuffer::ExternalBuffer(const Context& context, VkDeviceSize size, VkBufferUsageFlags usage)
    : device_(context.device()), size_(size) {
  const std::string reason = unsupported_reason(context, usage);
  if (!reason.empty()) throw Error("vulkan", reason);
  const bool dedicated_only = external_properties(context, usage).externalMemoryFeatures &
                              VK_EXTERNAL_MEMORY_FEATURE_DEDICATED_ONLY_BIT;

  VkExternalMemoryBufferCreateInfo external{};
  external.sType = VK_STRUCTURE_TYPE_EXTERNAL_MEMORY_BUFFER_CREATE_INFO;
  external.handleTypes = kHandleType;
  VkBufferCreateInfo info{};
  info.sType = VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO;
  info.pNext = &external;
  info.size = size;
  info.usage = usage;
  info.sharingMode = VK_SHARING_MODE_EXCLUSIVE;
  check(vkCreateBuffer(device_, &info, nullptr, &buffer_), "vkCreateBuffer(external)");

  try {
    VkMemoryDedicatedRequirements dedicated{};
    dedicated.sType = VK_STRUCTURE_TYPE_MEMORY_DEDICATED_REQUIREMENTS;
    VkMemoryRequirements2 requirements{};
    requirements.sType = VK_STRUCTURE_TYPE_MEMORY_REQUIREMENTS_2;
    requirements.pNext = &dedicated;
    VkBufferMemoryRequirementsInfo2 query{};
    query.sType = VK_STRUCTURE_TYPE_BUFFER_MEMORY_REQUIREMENTS_INFO_2;
    query.buffer = buffer_;
    vkGetBufferMemoryRequirements2(device_, &query, &requirements);
    dedicated_ = dedicated.requiresDedicatedAllocation || dedicated.prefersDedicatedAllocation ||
                 dedicated_only;
    allocation_size_ = requirements.memoryRequirements.size;

    VkMemoryDedicatedAllocateInfo dedicated_info{};
    dedicated_info.sType = VK_STRUCTURE_TYPE_MEMORY_DEDICATED_ALLOCATE_INFO;
    dedicated_info.buffer = buffer_;
    VkExportMemoryAllocateInfo export_info{};
    export_info.sType = VK_STRUCTURE_TYPE_EXPORT_MEMORY_ALLOCATE_INFO;
    export_info.pNext = dedicated_ ? &dedicated_info : nullptr;
    export_info.handleTypes = kHandleType;
    VkMemoryAllocateInfo alloc{};
    alloc.sType = VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO;
    alloc.pNext = &export_info;
    alloc.allocationSize = allocation_size_;
    memory_type_index_ = context.find_memory_type(requirements.memoryRequirements.memoryTypeBits,
                                                  VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT);
    alloc.memoryTypeIndex = memory_type_index_;
    check(vkAllocateMemory(device_, &alloc, nullptr, &memory_), "vkAllocateMemory(exportable)");
    check(vkBindBufferMemory(device_, buffer_, memory_, 0), "vkBindBufferMemory");
  } catch (...) {
    if (memory_ != VK_NULL_HANDLE) vkFreeMemory(device_, memory_, nullptr);
    vkDestroyBuffer(device_, buffer_, nullptr);
    throw;
  }
}

ExternalBuffer::~ExternalBuffer() {
  vkDestroyBuffer(device_, buffer_, nullptr);
  vkFreeMemory(device_, memory_, nullptr);
}

int ExternalBuffer::export_fd() const {
  const auto get_fd =
      reinterpret_cast<PFN_vkGetMemoryFdKHR>(vkGetDeviceProcAddr(device_, "vkGetMemoryFdKHR"));
  if (get_fd == nullptr) throw Error("vulkan", "vkGetMemoryFdKHR is not available");
  VkMemoryGetFdInfoKHR info{};
  info.sType = VK_STRUCTURE_TYPE_MEMORY_GET_FD_INFO_KHR;
  info.memory = memory_;
  info.handleType = kHandleType;
  int fd = -1;
  check(get_fd(device_, &info, &fd), "vkGetMemoryFdKHR");
  return fd;
}

void record_acquire_from_external(VkCommandBuffer cmd, VkBuffer buffer, uint32_t queue_family,
                                  VkPipelineStageFlags stage, VkAccessFlags access) {
  VkBufferMemoryBarrier barrier{};
  barrier.sType = VK_STRUCTURE_TYPE_BUFFER_MEMORY_BARRIER;
  barrier.dstAccessMask = access;
  barrier.srcQueueFamilyIndex = VK_QUEUE_FAMILY_EXTERNAL;
  barrier.dstQueueFamilyIndex = queue_family;
  barrier.buffer = buffer;
  barrier.size = VK_WHOLE_SIZE;
  // The external writer's work is ordered by the semaphore the submission waits at `stage`.
  vkCmdPipelineBarrier(cmd, stage, stage, 0, 0, nullptr, 1, &barrier, 0, nullptr);
}

void record_release_to_external(VkCommandBuffer cmd, VkBuffer buffer, uint32_t queue_family,
                                VkPipelineStageFlags stage, VkAccessFlags access) {
  VkBufferMemoryBarrier barrier{};
  barrier.sType = VK_STRUCTURE_TYPE_BUFFER_MEMORY_BARRIER;
  barrier.srcAccessMask = access;
  barrier.srcQueueFamilyIndex = queue_family;
  barrier.dstQueueFamilyIndex = VK_QUEUE_FAMILY_EXTERNAL;
  barrier.buffer = buffer;
  barrier.size = VK_WHOLE_SIZE;
  // The external side waits for the submission's signal, which follows every command.
  vkCmdPipelineBarrier(cmd, stage, VK_PIPELINE_STAGE_BOTTOM_OF_PIPE_BIT, 0, 0, nullptr, 1, &barrier,
                       0, nullptr);
}

}  // namespace wc::ui::vk
