// The plugin's own headless Vulkan device (no window): the physical device with the host's
// UUID, external memory fd export, and timeline semaphore fd export where the driver has it.
#pragma once

#include <vulkan/vulkan.h>

#include <array>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <vector>

#include "ui/vulkan/validation.h"

namespace wc::plugin {

using Uuid = std::array<uint8_t, VK_UUID_SIZE>;

struct VulkanDeviceOptions {
  bool validation = false;  // VK_LAYER_KHRONOS_validation + the project's counting messenger
  std::optional<Uuid> device_uuid;  // else the first capable device
};

class VulkanDevice {
 public:
  // Throws PluginError(WC_RESULT_ERROR_UNSUPPORTED) naming what is missing when no physical
  // device can export frames (Vulkan < 1.2, no timeline semaphores, no external memory fd).
  explicit VulkanDevice(const VulkanDeviceOptions& options);
  ~VulkanDevice();
  VulkanDevice(const VulkanDevice&) = delete;
  VulkanDevice& operator=(const VulkanDevice&) = delete;

  VkPhysicalDevice physical_device() const { return physical_device_; }
  VkDevice device() const { return device_; }
  uint32_t queue_family() const { return queue_family_; }
  // The queue is externally synchronised: hold queue_mutex() around every use.
  VkQueue queue() const { return queue_; }
  std::mutex& queue_mutex() { return queue_mutex_; }

  const Uuid& device_uuid() const { return device_uuid_; }
  const Uuid& driver_uuid() const { return driver_uuid_; }
  // Whether timeline semaphores can be exported as opaque fds (lavapipe: no).
  bool semaphore_export() const { return semaphore_export_; }
  // The device extensions a host importing our frames must enable (static strings).
  const std::vector<const char*>& host_extensions() const { return host_extensions_; }

  // A memory type allowed by `type_bits` with all of `flags`, or nullopt.
  std::optional<uint32_t> find_memory_type(uint32_t type_bits, VkMemoryPropertyFlags flags) const;

  uint64_t validation_errors() const { return counters_.errors.load(); }

  PFN_vkGetMemoryFdKHR get_memory_fd = nullptr;
  PFN_vkGetSemaphoreFdKHR get_semaphore_fd = nullptr;

 private:
  void create_instance(bool validation);
  void pick_physical_device(const VulkanDeviceOptions& options);
  void create_device();
  void destroy();

  ui::vk::ValidationCounters counters_;
  VkInstance instance_ = VK_NULL_HANDLE;
  std::unique_ptr<ui::vk::ValidationMessenger> messenger_;
  VkPhysicalDevice physical_device_ = VK_NULL_HANDLE;
  uint32_t queue_family_ = 0;
  VkDevice device_ = VK_NULL_HANDLE;
  VkQueue queue_ = VK_NULL_HANDLE;
  std::mutex queue_mutex_;
  Uuid device_uuid_{};
  Uuid driver_uuid_{};
  bool semaphore_export_ = false;
  std::vector<const char*> host_extensions_;
};

}  // namespace wc::plugin
