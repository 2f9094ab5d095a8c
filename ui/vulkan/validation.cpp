// The debug-utils messenger that turns validation messages into counted, logged events.
//
// Note [Real messenger]: a messenger only chained into VkInstanceCreateInfo.pNext covers
// vkCreateInstance/vkDestroyInstance; device-level errors then go to stdout and a test passes
// anyway (reproduced, research/systems.md §0). So we always create a persistent messenger object
// with vkCreateDebugUtilsMessengerEXT, and also chain one for instance creation.
#include "ui/vulkan/validation.h"

#include <cstring>
#include <vector>

#include "engine/core/error.h"
#include "engine/core/log.h"
#include "ui/vulkan/check.h"

namespace wc::ui::vk {
namespace {

VKAPI_ATTR VkBool32 VKAPI_CALL on_message(VkDebugUtilsMessageSeverityFlagBitsEXT severity,
                                          VkDebugUtilsMessageTypeFlagsEXT types,
                                          const VkDebugUtilsMessengerCallbackDataEXT* data,
                                          void* user_data) {
  auto* counters = static_cast<ValidationCounters*>(user_data);
  const char* text = data && data->pMessage ? data->pMessage : "(no message)";
  if (severity & VK_DEBUG_UTILS_MESSAGE_SEVERITY_ERROR_BIT_EXT) {
    counters->errors.fetch_add(1);
    log_error("vulkan validation error: ", text);
  } else if (severity & VK_DEBUG_UTILS_MESSAGE_SEVERITY_WARNING_BIT_EXT) {
    counters->warnings.fetch_add(1);
    log_warning("vulkan validation warning: ", text);
  }
  return VK_FALSE;  // never abort the call: the counters decide whether a test fails
}

}  // namespace

bool validation_layer_available() {
  uint32_t count = 0;
  vkEnumerateInstanceLayerProperties(&count, nullptr);
  std::vector<VkLayerProperties> layers(count);
  vkEnumerateInstanceLayerProperties(&count, layers.data());
  for (const auto& layer : layers) {
    if (std::strcmp(layer.layerName, kValidationLayer) == 0) return true;
  }
  return false;
}

VkDebugUtilsMessengerCreateInfoEXT messenger_create_info(ValidationCounters* counters) {
  VkDebugUtilsMessengerCreateInfoEXT info{};
  info.sType = VK_STRUCTURE_TYPE_DEBUG_UTILS_MESSENGER_CREATE_INFO_EXT;
  info.messageSeverity = VK_DEBUG_UTILS_MESSAGE_SEVERITY_WARNING_BIT_EXT |
                         VK_DEBUG_UTILS_MESSAGE_SEVERITY_ERROR_BIT_EXT;
  info.messageType = VK_DEBUG_UTILS_MESSAGE_TYPE_GENERAL_BIT_EXT |
                     VK_DEBUG_UTILS_MESSAGE_TYPE_VALIDATION_BIT_EXT |
                     VK_DEBUG_UTILS_MESSAGE_TYPE_PERFORMANCE_BIT_EXT;
  info.pfnUserCallback = on_message;
  info.pUserData = counters;
  return info;
}

ValidationMessenger::ValidationMessenger(VkInstance instance, ValidationCounters* counters)
    : instance_(instance) {
  auto create = reinterpret_cast<PFN_vkCreateDebugUtilsMessengerEXT>(
      vkGetInstanceProcAddr(instance, "vkCreateDebugUtilsMessengerEXT"));
  if (!create) throw Error("vkCreateDebugUtilsMessengerEXT", "not available (VK_EXT_debug_utils)");
  const VkDebugUtilsMessengerCreateInfoEXT info = messenger_create_info(counters);
  check(create(instance, &info, nullptr, &messenger_), "vkCreateDebugUtilsMessengerEXT");
}

ValidationMessenger::~ValidationMessenger() {
  reset();
}

void ValidationMessenger::reset() {
  if (messenger_ == VK_NULL_HANDLE) return;
  auto destroy = reinterpret_cast<PFN_vkDestroyDebugUtilsMessengerEXT>(
      vkGetInstanceProcAddr(instance_, "vkDestroyDebugUtilsMessengerEXT"));
  if (destroy) destroy(instance_, messenger_, nullptr);
  messenger_ = VK_NULL_HANDLE;
}

}  // namespace wc::ui::vk
