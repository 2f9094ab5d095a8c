// The validation-layer messenger: a real vkCreateDebugUtilsMessengerEXT object that counts and logs
// errors and warnings, so tests can assert "zero errors". See Note [Real messenger].
#pragma once

#include <vulkan/vulkan.h>

#include <atomic>
#include <cstdint>

namespace wc::ui::vk {

inline constexpr const char* kValidationLayer = "VK_LAYER_KHRONOS_validation";

// Counters the debug callback writes to; read them from any thread.
struct ValidationCounters {
  std::atomic<uint64_t> errors{0};
  std::atomic<uint64_t> warnings{0};
};

bool validation_layer_available();

// Fills a create-info whose callback counts into `counters` and logs through wc::log.
VkDebugUtilsMessengerCreateInfoEXT messenger_create_info(ValidationCounters* counters);

// Owns one messenger on `instance`; destroy before the instance.
class ValidationMessenger {
 public:
  ValidationMessenger() = default;
  ValidationMessenger(VkInstance instance, ValidationCounters* counters);
  ~ValidationMessenger();
  ValidationMessenger(const ValidationMessenger&) = delete;
  ValidationMessenger& operator=(const ValidationMessenger&) = delete;

  void reset();

 private:
  VkInstance instance_ = VK_NULL_HANDLE;
  VkDebugUtilsMessengerEXT messenger_ = VK_NULL_HANDLE;
};

}  // namespace wc::ui::vk
