// The Vulkan instance, validation messenger, physical/logical device and graphics queue shared
// by the windowed and headless renderers (Vulkan 1.2+, timeline semaphores on).
#pragma once

#include <vulkan/vulkan.h>

#include <array>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "ui/vulkan/validation.h"

namespace wc::ui::vk {

using DeviceUuid = std::array<uint8_t, VK_UUID_SIZE>;

struct ContextOptions {
  // Enables VK_LAYER_KHRONOS_validation and a counting messenger; fails if the layer is missing.
  bool validation = false;
  // Extra instance extensions (a window passes glfwGetRequiredInstanceExtensions here).
  std::vector<std::string> instance_extensions;
  // Creates the window surface once the instance exists; the chosen queue must present to it.
  // Empty for headless use: then no surface or swapchain extension is involved.
  std::function<VkSurfaceKHR(VkInstance)> make_surface;
  // Prefers the device whose deviceUUID matches (the CUDA device of the GPU frame path); the
  // others stay candidates (discrete GPUs first), so a mismatch is the frame path's to report
  // and fall back from: compare Context::device_uuid().
  std::optional<DeviceUuid> device_uuid;
  // Enables VK_KHR_external_memory_fd and VK_KHR_external_semaphore_fd where the device has them
  // (the CUDA frame path, ui/frames/cuda_frame_sink.h); a device without them is still accepted.
  bool external_interop = false;
};

class Context {
 public:
  explicit Context(const ContextOptions& options);
  ~Context();
  Context(const Context&) = delete;
  Context& operator=(const Context&) = delete;

  VkInstance instance() const { return instance_; }
  VkPhysicalDevice physical_device() const { return physical_device_; }
  VkDevice device() const { return device_; }
  uint32_t queue_family() const { return queue_family_; }
  VkQueue queue() const { return queue_; }
  VkSurfaceKHR surface() const { return surface_; }
  const std::string& device_name() const { return device_name_; }
  uint32_t api_version() const { return api_version_; }
  bool validation_enabled() const { return validation_enabled_; }
  const DeviceUuid& device_uuid() const { return device_uuid_; }
  // Whether the logical device was created with this extension enabled.
  bool has_device_extension(const std::string& name) const;

  // Validation messages seen so far (0 when validation is off).
  uint64_t validation_errors() const { return counters_->errors.load(); }
  uint64_t validation_warnings() const { return counters_->warnings.load(); }

  // A memory type index allowed by `type_bits` that has all of `flags`; throws if none.
  uint32_t find_memory_type(uint32_t type_bits, VkMemoryPropertyFlags flags) const;

  // Records setup work (uploads, first layout transitions) into a one-time command buffer,
  // submits it and waits for it. Render-thread only (it uses the queue).
  void submit_and_wait(const std::function<void(VkCommandBuffer)>& record);

 private:
  void create_instance(const ContextOptions& options);
  void pick_physical_device(const ContextOptions& options);
  void create_device();
  void destroy();

  std::unique_ptr<ValidationCounters> counters_ = std::make_unique<ValidationCounters>();
  bool validation_enabled_ = false;
  VkInstance instance_ = VK_NULL_HANDLE;
  std::unique_ptr<ValidationMessenger> messenger_;
  VkSurfaceKHR surface_ = VK_NULL_HANDLE;
  VkPhysicalDevice physical_device_ = VK_NULL_HANDLE;
  std::string device_name_;
  uint32_t api_version_ = 0;
  DeviceUuid device_uuid_{};
  bool external_interop_ = false;
  std::vector<std::string> device_extensions_;
  uint32_t queue_family_ = 0;
  VkDevice device_ = VK_NULL_HANDLE;
  VkQueue queue_ = VK_NULL_HANDLE;
  VkCommandPool setup_pool_ = VK_NULL_HANDLE;
};

}  // namespace wc::ui::vk
