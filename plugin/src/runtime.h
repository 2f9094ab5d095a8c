// A wc_runtime: the compute device sessions run on, the host's log callback, and the plugin's
// Vulkan device, created on first use so hosts that only take CPU frames never touch Vulkan.
#pragma once

#include <ATen/Device.h>

#include <memory>
#include <mutex>
#include <optional>
#include <string>

#include "plugin/src/log_forwarding.h"
#include "plugin/src/vulkan_device.h"
#include "worldcast/worldcast.h"

namespace wc::plugin {

class Runtime {
 public:
  // Validates `desc` (already copied into a full-size struct) and picks the device. Throws
  // PluginError.
  explicit Runtime(const wc_runtime_desc& desc);
  ~Runtime();
  Runtime(const Runtime&) = delete;
  Runtime& operator=(const Runtime&) = delete;

  const LogTarget* log_target() const { return &log_target_; }
  at::Device device() const { return device_; }
  int cuda_device() const { return cuda_device_; }  // -1 on CPU
  bool vulkan_device_local() const { return (flags_ & WC_RUNTIME_FLAG_VULKAN_DEVICE_LOCAL) != 0; }

  // The plugin's Vulkan device, created on the first call; a failure is remembered and
  // rethrown (PluginError) on later calls rather than retried every frame.
  std::shared_ptr<VulkanDevice> vulkan();
  // Validation errors seen on the Vulkan device so far (0 when it does not exist).
  uint64_t vulkan_validation_errors() const;

 private:
  // The device the runtime's sessions use, from desc.device (and the device_uuid flag).
  void choose_device(const wc_runtime_desc& desc);

  LogTarget log_target_;
  uint32_t flags_ = 0;
  std::optional<Uuid> uuid_;
  at::Device device_ = at::kCPU;
  int cuda_device_ = -1;

  mutable std::mutex vulkan_mutex_;
  std::shared_ptr<VulkanDevice> vulkan_;
  std::optional<std::pair<wc_result, std::string>> vulkan_failure_;
};

}  // namespace wc::plugin
