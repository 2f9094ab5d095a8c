// Turns failed Vulkan calls into wc::Error naming the call and the VkResult.
#pragma once

#include <vulkan/vulkan.h>

namespace wc::ui::vk {

const char* result_name(VkResult result);
// Throws wc::Error("<what>: VK_ERROR_...") unless result is VK_SUCCESS.
void check(VkResult result, const char* what);

}  // namespace wc::ui::vk
