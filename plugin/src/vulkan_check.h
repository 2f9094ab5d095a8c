// Failed Vulkan calls inside the plugin become PluginErrors with the matching result code
// (device lost, out of memory, unsupported, else internal).
#pragma once

#include <vulkan/vulkan.h>

namespace wc::plugin {

// Throws PluginError naming `what` and the VkResult unless result is VK_SUCCESS.
void vk_check(VkResult result, const char* what);

}  // namespace wc::plugin
