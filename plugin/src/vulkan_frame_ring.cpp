// See vulkan_frame_ring.h.
//
// Note [Vulkan frame hand-off]: the host imports the ring's memory and timeline semaphore once
// (wc_session_export_vulkan) and then, per frame, reads slot s after the semaphore reaches the
// frame's value. Session frames are decoded on the CPU, so the plugin writes them either by
// memcpy into host-visible exported memory, or (a device-local ring, faster for hosts to sample
// from on discrete GPUs) into a staging buffer copied on the plugin's queue; that copy releases
// the slot's bytes to VK_QUEUE_FAMILY_EXTERNAL and reacquires them before the slot's next write,
// as the spec asks of memory shared with another device. Where the timeline semaphore cannot be
// exported (lavapipe has no VK_KHR_external_semaphore_fd), every write completes before
// wc_session_get_frame returns, so a host submission made after that call sees the pixels.
//
// Note [One signalling side]: the timeline is only ever signalled by submissions to the plugin's
// queue (for a host-visible ring, an empty batch after the memcpy; host writes made before
// vkQueueSubmit are visible to it), and the plugin never waits on or queries the exported
// semaphore from the host: its own waits (slot reuse, teardown, host-synchronous frames) are on a
// fence per slot. Mixing vkSignalSemaphore with queue signals, or host waits and counter reads on
// a semaphore that another device also uses, is where the H200 run of the validation layer
// reported VUID-VkSemaphoreSignalInfo-value-03259 (a host signal below a still "pending" one):
// the layer cannot see the other device's progress, so every host-side operation on the shared
// payload had to go. A queue signal costs one empty submission per frame.
#include "plugin/src/vulkan_frame_ring.h"

#include <unistd.h>

#include <algorithm>
#include <cstring>

#include "plugin/src/plugin_error.h"
#include "plugin/src/vulkan_check.h"

namespace wc::plugin {
namespace {

constexpr VkExternalMemoryHandleTypeFlagBits kMemoryHandle =
    VK_EXTERNAL_MEMORY_HANDLE_TYPE_OPAQUE_FD_BIT;

VkDeviceSize align_up(VkDeviceSize value, VkDeviceSize alignment) {
  return (value + alignment - 1) / alignment * alignment;
}

}  // namespace

VulkanFrameRing::VulkanFrameRing(std::shared_ptr<VulkanDevice> device, int width, int height,
                                 int slots, bool device_local)
    : device_(std::move(device)),
      width_(width),
      height_(height),
      slots_(slots),
      device_local_(device_local),
      fence_pending_(static_cast<size_t>(slots), false),
      slot_written_(static_cast<size_t>(slots), false) {
  try {
    create_ring_buffer();
    create_fences();
    if (device_local_) create_staging();
  } catch (...) {
    destroy();
    throw;
  }
}

VulkanFrameRing::~VulkanFrameRing() {
  destroy();
}

void VulkanFrameRing::destroy() {
  const VkDevice device = device_->device();
  // Outstanding submissions must finish before their buffers and semaphore go away.
  for (size_t i = 0; i < fences_.size(); ++i) {
    if (fence_pending_[i]) vkWaitForFences(device, 1, &fences_[i], VK_TRUE, UINT64_MAX);
    vkDestroyFence(device, fences_[i], nullptr);
  }
  fences_.clear();
  if (pool_ != VK_NULL_HANDLE) vkDestroyCommandPool(device, pool_, nullptr);
  if (staging_ != VK_NULL_HANDLE) vkDestroyBuffer(device, staging_, nullptr);
  if (staging_memory_ != VK_NULL_HANDLE) vkFreeMemory(device, staging_memory_, nullptr);
  if (timeline_ != VK_NULL_HANDLE) vkDestroySemaphore(device, timeline_, nullptr);
  if (buffer_ != VK_NULL_HANDLE) vkDestroyBuffer(device, buffer_, nullptr);
  // An importer's memory object keeps the payload alive after this.
  if (memory_ != VK_NULL_HANDLE) vkFreeMemory(device, memory_, nullptr);
  pool_ = VK_NULL_HANDLE;
  staging_ = VK_NULL_HANDLE;
  staging_memory_ = VK_NULL_HANDLE;
  timeline_ = VK_NULL_HANDLE;
  buffer_ = VK_NULL_HANDLE;
  memory_ = VK_NULL_HANDLE;
}

void VulkanFrameRing::create_ring_buffer() {
  const VkDevice device = device_->device();
  VkPhysicalDeviceProperties properties{};
  vkGetPhysicalDeviceProperties(device_->physical_device(), &properties);
  const VkDeviceSize alignment =
      std::max<VkDeviceSize>({256, properties.limits.optimalBufferCopyOffsetAlignment,
                              properties.limits.minStorageBufferOffsetAlignment});
  frame_bytes_ = static_cast<VkDeviceSize>(width_) * static_cast<VkDeviceSize>(height_) * 4;
  slot_stride_ = align_up(frame_bytes_, alignment);
  buffer_size_ = slot_stride_ * static_cast<VkDeviceSize>(slots_);
  usage_ = VK_BUFFER_USAGE_TRANSFER_SRC_BIT | VK_BUFFER_USAGE_TRANSFER_DST_BIT |
           VK_BUFFER_USAGE_STORAGE_BUFFER_BIT;

  VkPhysicalDeviceExternalBufferInfo external_info{};
  external_info.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_EXTERNAL_BUFFER_INFO;
  external_info.usage = usage_;
  external_info.handleType = kMemoryHandle;
  VkExternalBufferProperties external{};
  external.sType = VK_STRUCTURE_TYPE_EXTERNAL_BUFFER_PROPERTIES;
  vkGetPhysicalDeviceExternalBufferProperties(device_->physical_device(), &external_info,
                                              &external);
  const VkExternalMemoryFeatureFlags features =
      external.externalMemoryProperties.externalMemoryFeatures;
  if (!(features & VK_EXTERNAL_MEMORY_FEATURE_EXPORTABLE_BIT)) {
    throw PluginError(WC_RESULT_ERROR_UNSUPPORTED,
                      "the Vulkan device cannot export buffer memory as an opaque fd");
  }

  VkExternalMemoryBufferCreateInfo external_create{};
  external_create.sType = VK_STRUCTURE_TYPE_EXTERNAL_MEMORY_BUFFER_CREATE_INFO;
  external_create.handleTypes = kMemoryHandle;
  VkBufferCreateInfo buffer_info{};
  buffer_info.sType = VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO;
  buffer_info.pNext = &external_create;
  buffer_info.size = buffer_size_;
  buffer_info.usage = usage_;
  buffer_info.sharingMode = VK_SHARING_MODE_EXCLUSIVE;
  vk_check(vkCreateBuffer(device, &buffer_info, nullptr, &buffer_), "vkCreateBuffer (frame ring)");

  VkMemoryDedicatedRequirements dedicated{};
  dedicated.sType = VK_STRUCTURE_TYPE_MEMORY_DEDICATED_REQUIREMENTS;
  VkMemoryRequirements2 requirements{};
  requirements.sType = VK_STRUCTURE_TYPE_MEMORY_REQUIREMENTS_2;
  requirements.pNext = &dedicated;
  VkBufferMemoryRequirementsInfo2 requirements_info{};
  requirements_info.sType = VK_STRUCTURE_TYPE_BUFFER_MEMORY_REQUIREMENTS_INFO_2;
  requirements_info.buffer = buffer_;
  vkGetBufferMemoryRequirements2(device, &requirements_info, &requirements);
  // Decided here only; the export reports it so the importer matches (research/systems.md §1).
  dedicated_ = dedicated.prefersDedicatedAllocation || dedicated.requiresDedicatedAllocation ||
               (features & VK_EXTERNAL_MEMORY_FEATURE_DEDICATED_ONLY_BIT);

  const uint32_t type_bits = requirements.memoryRequirements.memoryTypeBits;
  const std::optional<uint32_t> type =
      device_local_
          ? device_->find_memory_type(type_bits, VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT)
          : device_->find_memory_type(type_bits, VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT |
                                                     VK_MEMORY_PROPERTY_HOST_COHERENT_BIT);
  if (!type) {
    throw PluginError(WC_RESULT_ERROR_UNSUPPORTED,
                      device_local_ ? "no device-local memory type for an exportable buffer"
                                    : "no host-visible coherent memory type for an exportable "
                                      "buffer (try WC_RUNTIME_FLAG_VULKAN_DEVICE_LOCAL)");
  }
  memory_type_ = *type;
  allocation_size_ = requirements.memoryRequirements.size;

  VkMemoryDedicatedAllocateInfo dedicated_info{};
  dedicated_info.sType = VK_STRUCTURE_TYPE_MEMORY_DEDICATED_ALLOCATE_INFO;
  dedicated_info.buffer = buffer_;
  VkExportMemoryAllocateInfo export_info{};
  export_info.sType = VK_STRUCTURE_TYPE_EXPORT_MEMORY_ALLOCATE_INFO;
  export_info.pNext = dedicated_ ? &dedicated_info : nullptr;
  export_info.handleTypes = kMemoryHandle;
  VkMemoryAllocateInfo allocate{};
  allocate.sType = VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO;
  allocate.pNext = &export_info;
  allocate.allocationSize = allocation_size_;
  allocate.memoryTypeIndex = memory_type_;
  vk_check(vkAllocateMemory(device, &allocate, nullptr, &memory_), "vkAllocateMemory (frame ring)");
  vk_check(vkBindBufferMemory(device, buffer_, memory_, 0), "vkBindBufferMemory (frame ring)");
  if (!device_local_) {
    vk_check(vkMapMemory(device, memory_, 0, VK_WHOLE_SIZE, 0, &mapped_), "vkMapMemory");
  }

  VkExportSemaphoreCreateInfo export_semaphore{};
  export_semaphore.sType = VK_STRUCTURE_TYPE_EXPORT_SEMAPHORE_CREATE_INFO;
  export_semaphore.handleTypes = VK_EXTERNAL_SEMAPHORE_HANDLE_TYPE_OPAQUE_FD_BIT;
  VkSemaphoreTypeCreateInfo timeline{};
  timeline.sType = VK_STRUCTURE_TYPE_SEMAPHORE_TYPE_CREATE_INFO;
  timeline.pNext = device_->semaphore_export() ? &export_semaphore : nullptr;
  timeline.semaphoreType = VK_SEMAPHORE_TYPE_TIMELINE;
  timeline.initialValue = 0;
  VkSemaphoreCreateInfo semaphore_info{};
  semaphore_info.sType = VK_STRUCTURE_TYPE_SEMAPHORE_CREATE_INFO;
  semaphore_info.pNext = &timeline;
  vk_check(vkCreateSemaphore(device, &semaphore_info, nullptr, &timeline_),
           "vkCreateSemaphore (frame ring timeline)");
}

void VulkanFrameRing::create_staging() {
  const VkDevice device = device_->device();
  VkBufferCreateInfo buffer_info{};
  buffer_info.sType = VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO;
  buffer_info.size = buffer_size_;
  buffer_info.usage = VK_BUFFER_USAGE_TRANSFER_SRC_BIT;
  buffer_info.sharingMode = VK_SHARING_MODE_EXCLUSIVE;
  vk_check(vkCreateBuffer(device, &buffer_info, nullptr, &staging_), "vkCreateBuffer (staging)");
  VkMemoryRequirements requirements{};
  vkGetBufferMemoryRequirements(device, staging_, &requirements);
  const std::optional<uint32_t> type = device_->find_memory_type(
      requirements.memoryTypeBits,
      VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT | VK_MEMORY_PROPERTY_HOST_COHERENT_BIT);
  if (!type) throw PluginError(WC_RESULT_ERROR_UNSUPPORTED, "no host-visible memory for staging");
  VkMemoryAllocateInfo allocate{};
  allocate.sType = VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO;
  allocate.allocationSize = requirements.size;
  allocate.memoryTypeIndex = *type;
  vk_check(vkAllocateMemory(device, &allocate, nullptr, &staging_memory_),
           "vkAllocateMemory (staging)");
  vk_check(vkBindBufferMemory(device, staging_, staging_memory_, 0), "vkBindBufferMemory");
  vk_check(vkMapMemory(device, staging_memory_, 0, VK_WHOLE_SIZE, 0, &staging_mapped_),
           "vkMapMemory (staging)");

  VkCommandPoolCreateInfo pool{};
  pool.sType = VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO;
  pool.flags = VK_COMMAND_POOL_CREATE_RESET_COMMAND_BUFFER_BIT;
  pool.queueFamilyIndex = device_->queue_family();
  vk_check(vkCreateCommandPool(device, &pool, nullptr, &pool_), "vkCreateCommandPool");
  commands_.resize(static_cast<size_t>(slots_));
  VkCommandBufferAllocateInfo alloc{};
  alloc.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO;
  alloc.commandPool = pool_;
  alloc.level = VK_COMMAND_BUFFER_LEVEL_PRIMARY;
  alloc.commandBufferCount = static_cast<uint32_t>(slots_);
  vk_check(vkAllocateCommandBuffers(device, &alloc, commands_.data()), "vkAllocateCommandBuffers");
}

void VulkanFrameRing::create_fences() {
  VkFenceCreateInfo info{};
  info.sType = VK_STRUCTURE_TYPE_FENCE_CREATE_INFO;
  for (int i = 0; i < slots_; ++i) {
    VkFence fence = VK_NULL_HANDLE;
    vk_check(vkCreateFence(device_->device(), &info, nullptr, &fence), "vkCreateFence");
    fences_.push_back(fence);
  }
}

void VulkanFrameRing::wait_for_slot(size_t index) {
  if (!fence_pending_[index]) return;
  const VkDevice device = device_->device();
  vk_check(vkWaitForFences(device, 1, &fences_[index], VK_TRUE, UINT64_MAX), "vkWaitForFences");
  vk_check(vkResetFences(device, 1, &fences_[index]), "vkResetFences");
  fence_pending_[index] = false;
}

uint64_t VulkanFrameRing::submit(size_t index, const VkCommandBuffer* commands,
                                 uint32_t command_count) {
  const uint64_t value = value_ + 1;
  VkTimelineSemaphoreSubmitInfo timeline{};
  timeline.sType = VK_STRUCTURE_TYPE_TIMELINE_SEMAPHORE_SUBMIT_INFO;
  timeline.signalSemaphoreValueCount = 1;
  timeline.pSignalSemaphoreValues = &value;
  VkSubmitInfo submit{};
  submit.sType = VK_STRUCTURE_TYPE_SUBMIT_INFO;
  submit.pNext = &timeline;
  submit.commandBufferCount = command_count;
  submit.pCommandBuffers = commands;
  submit.signalSemaphoreCount = 1;
  submit.pSignalSemaphores = &timeline_;
  {
    std::lock_guard<std::mutex> lock(device_->queue_mutex());
    vk_check(vkQueueSubmit(device_->queue(), 1, &submit, fences_[index]),
             "vkQueueSubmit (frame write)");
  }
  fence_pending_[index] = true;
  value_ = value;
  if (!device_->semaphore_export()) wait_for_slot(index);  // host-synchronous frames
  return value;
}

uint64_t VulkanFrameRing::write(int slot, const uint8_t* rgba) {
  const VkDeviceSize offset = slot_offset(slot);
  const size_t index = static_cast<size_t>(slot);
  // The slot's previous submission must be done before its bytes, staging bytes and commands
  // are reused (long done in practice: the host has read and released the slot since).
  wait_for_slot(index);
  if (!device_local_) {
    std::memcpy(static_cast<uint8_t*>(mapped_) + offset, rgba, frame_bytes_);
    return submit(index, nullptr, 0);
  }

  std::memcpy(static_cast<uint8_t*>(staging_mapped_) + offset, rgba, frame_bytes_);
  const bool first_use = !slot_written_[index];
  slot_written_[index] = true;
  VkCommandBuffer cmd = commands_[index];
  vk_check(vkResetCommandBuffer(cmd, 0), "vkResetCommandBuffer");
  VkCommandBufferBeginInfo begin{};
  begin.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO;
  begin.flags = VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT;
  vk_check(vkBeginCommandBuffer(cmd, &begin), "vkBeginCommandBuffer");
  VkBufferMemoryBarrier barrier{};
  barrier.sType = VK_STRUCTURE_TYPE_BUFFER_MEMORY_BARRIER;
  barrier.buffer = buffer_;
  barrier.offset = offset;
  barrier.size = frame_bytes_;
  if (!first_use) {
    // Reacquire the bytes the previous write released to the host's device.
    barrier.srcAccessMask = 0;
    barrier.dstAccessMask = VK_ACCESS_TRANSFER_WRITE_BIT;
    barrier.srcQueueFamilyIndex = VK_QUEUE_FAMILY_EXTERNAL;
    barrier.dstQueueFamilyIndex = device_->queue_family();
    vkCmdPipelineBarrier(cmd, VK_PIPELINE_STAGE_TOP_OF_PIPE_BIT, VK_PIPELINE_STAGE_TRANSFER_BIT, 0,
                         0, nullptr, 1, &barrier, 0, nullptr);
  }
  VkBufferCopy region{};
  region.srcOffset = offset;
  region.dstOffset = offset;
  region.size = frame_bytes_;
  vkCmdCopyBuffer(cmd, staging_, buffer_, 1, &region);
  barrier.srcAccessMask = VK_ACCESS_TRANSFER_WRITE_BIT;
  barrier.dstAccessMask = 0;
  barrier.srcQueueFamilyIndex = device_->queue_family();
  barrier.dstQueueFamilyIndex = VK_QUEUE_FAMILY_EXTERNAL;
  vkCmdPipelineBarrier(cmd, VK_PIPELINE_STAGE_TRANSFER_BIT, VK_PIPELINE_STAGE_BOTTOM_OF_PIPE_BIT, 0,
                       0, nullptr, 1, &barrier, 0, nullptr);
  vk_check(vkEndCommandBuffer(cmd), "vkEndCommandBuffer");
  return submit(index, &cmd, 1);
}

void VulkanFrameRing::export_to(wc_vulkan_export& out) const {
  const VkDevice device = device_->device();
  VkMemoryGetFdInfoKHR memory_info{};
  memory_info.sType = VK_STRUCTURE_TYPE_MEMORY_GET_FD_INFO_KHR;
  memory_info.memory = memory_;
  memory_info.handleType = kMemoryHandle;
  int memory_fd = -1;
  vk_check(device_->get_memory_fd(device, &memory_info, &memory_fd), "vkGetMemoryFdKHR");
  int semaphore_fd = -1;
  if (device_->semaphore_export()) {
    VkSemaphoreGetFdInfoKHR semaphore_info{};
    semaphore_info.sType = VK_STRUCTURE_TYPE_SEMAPHORE_GET_FD_INFO_KHR;
    semaphore_info.semaphore = timeline_;
    semaphore_info.handleType = VK_EXTERNAL_SEMAPHORE_HANDLE_TYPE_OPAQUE_FD_BIT;
    const VkResult result = device_->get_semaphore_fd(device, &semaphore_info, &semaphore_fd);
    if (result != VK_SUCCESS) {
      close(memory_fd);  // the caller gets neither fd on failure
      vk_check(result, "vkGetSemaphoreFdKHR");
    }
  }

  out.flags = (device_->semaphore_export() ? 0u : WC_VULKAN_EXPORT_HOST_SYNCHRONOUS) |
              (dedicated_ ? WC_VULKAN_EXPORT_DEDICATED : 0u);
  out.memory_fd = memory_fd;
  out.memory_type_index = memory_type_;
  out.allocation_size = allocation_size_;
  out.buffer_size = buffer_size_;
  out.buffer_usage = usage_;
  out.slot_count = static_cast<uint32_t>(slots_);
  out.slot_stride = slot_stride_;
  out.semaphore_fd = semaphore_fd;
  out.semaphore_value = value_;
  std::memcpy(out.device_uuid, device_->device_uuid().data(), VK_UUID_SIZE);
  std::memcpy(out.driver_uuid, device_->driver_uuid().data(), VK_UUID_SIZE);
  out.width = width_;
  out.height = height_;
  out.row_pitch = row_pitch();
  out.format = WC_FORMAT_RGBA8_UNORM;
}

}  // namespace wc::plugin
