// See vulkan_check.h.
#include "plugin/src/vulkan_check.h"

#include <string>

#include "plugin/src/plugin_error.h"
#include "ui/vulkan/check.h"

namespace wc::plugin {

void vk_check(VkResult result, const char* what) {
  if (result == VK_SUCCESS) return;
  wc_result code = WC_RESULT_ERROR_INTERNAL;
  switch (result) {
    case VK_ERROR_DEVICE_LOST:
      code = WC_RESULT_ERROR_DEVICE_LOST;
      break;
    case VK_ERROR_OUT_OF_HOST_MEMORY:
    case VK_ERROR_OUT_OF_DEVICE_MEMORY:
      code = WC_RESULT_ERROR_OUT_OF_MEMORY;
      break;
    case VK_ERROR_EXTENSION_NOT_PRESENT:
    case VK_ERROR_FEATURE_NOT_PRESENT:
    case VK_ERROR_INCOMPATIBLE_DRIVER:
    case VK_ERROR_LAYER_NOT_PRESENT:
    case VK_ERROR_INITIALIZATION_FAILED:
    case VK_ERROR_FORMAT_NOT_SUPPORTED:
      code = WC_RESULT_ERROR_UNSUPPORTED;
      break;
    default:
      break;
  }
  throw PluginError(code, std::string(what) + ": " + ui::vk::result_name(result));
}

}  // namespace wc::plugin
