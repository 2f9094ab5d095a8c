// See runtime.h.
#include "plugin/src/runtime.h"

#include <cstdio>
#include <cstring>

#include "engine/core/log.h"
#include "plugin/src/cuda_frames.h"
#include "plugin/src/plugin_error.h"

namespace wc::plugin {

Runtime::Runtime(const wc_runtime_desc& desc) {
  if (desc.log_level < WC_LOG_DEBUG || desc.log_level > WC_LOG_ERROR + 1) {
    throw PluginError(WC_RESULT_ERROR_INVALID_ARGUMENT,
                      "log_level must be a WC_LOG_* value, got " + std::to_string(desc.log_level));
  }
  constexpr uint32_t kKnownFlags = WC_RUNTIME_FLAG_DEVICE_UUID | WC_RUNTIME_FLAG_VULKAN_VALIDATION |
                                   WC_RUNTIME_FLAG_VULKAN_DEVICE_LOCAL;
  if (desc.flags & ~kKnownFlags) {
    char hex[16];
    std::snprintf(hex, sizeof(hex), "0x%x", desc.flags & ~kKnownFlags);
    throw PluginError(WC_RESULT_ERROR_INVALID_ARGUMENT, std::string("unknown flags ") + hex);
  }
  flags_ = desc.flags;
  log_target_.log = desc.log;
  log_target_.user_data = desc.log_user_data;
  log_target_.min_level = desc.log_level;
  // Registered before anything below can log (LibTorch warns while probing CUDA on a host
  // without it), so that every message reaches this runtime's callback at its level.
  register_log_target(&log_target_);
  try {
    ScopedLogTarget scope(&log_target_);
    choose_device(desc);
  } catch (...) {
    unregister_log_target(&log_target_);
    throw;
  }
}

void Runtime::choose_device(const wc_runtime_desc& desc) {
  if (flags_ & WC_RUNTIME_FLAG_DEVICE_UUID) {
    Uuid uuid;
    std::memcpy(uuid.data(), desc.device_uuid, uuid.size());
    uuid_ = uuid;
  }

  const int cuda_count = cuda_device_count();
  switch (desc.device) {
    case WC_DEVICE_CPU:
      break;
    case WC_DEVICE_AUTO:
    case WC_DEVICE_CUDA: {
      if (!cuda_built() || cuda_count == 0) {
        if (desc.device == WC_DEVICE_AUTO) break;
        throw PluginError(WC_RESULT_ERROR_UNSUPPORTED,
                          cuda_built() ? "no CUDA device is present"
                                       : "this plugin was built without CUDA (WORLDCAST_CUDA=OFF)");
      }
      cuda_device_ = uuid_ ? cuda_device_for_uuid(uuid_->data()) : 0;
      if (cuda_device_ < 0) {
        if (desc.device == WC_DEVICE_AUTO) break;  // the host's GPU is not a CUDA device
        throw PluginError(WC_RESULT_ERROR_UNSUPPORTED, "no CUDA device has the given device_uuid");
      }
      device_ = at::Device(at::kCUDA, static_cast<at::DeviceIndex>(cuda_device_));
      break;
    }
    default:
      throw PluginError(
          WC_RESULT_ERROR_INVALID_ARGUMENT,
          "device must be WC_DEVICE_AUTO, _CPU or _CUDA, got " + std::to_string(desc.device));
  }
}

Runtime::~Runtime() {
  {
    ScopedLogTarget scope(&log_target_);
    std::lock_guard<std::mutex> lock(vulkan_mutex_);
    vulkan_.reset();
  }
  unregister_log_target(&log_target_);
}

std::shared_ptr<VulkanDevice> Runtime::vulkan() {
  std::lock_guard<std::mutex> lock(vulkan_mutex_);
  if (vulkan_) return vulkan_;
  if (vulkan_failure_) throw PluginError(vulkan_failure_->first, vulkan_failure_->second);
  VulkanDeviceOptions options;
  options.validation = (flags_ & WC_RUNTIME_FLAG_VULKAN_VALIDATION) != 0;
  options.device_uuid = uuid_;
  try {
    vulkan_ = std::make_shared<VulkanDevice>(options);
  } catch (const PluginError& error) {
    vulkan_failure_.emplace(error.code(), error.what());
    throw;
  }
  return vulkan_;
}

uint64_t Runtime::vulkan_validation_errors() const {
  std::lock_guard<std::mutex> lock(vulkan_mutex_);
  return vulkan_ ? vulkan_->validation_errors() : 0;
}

}  // namespace wc::plugin
