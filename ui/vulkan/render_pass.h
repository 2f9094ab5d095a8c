// The single-subpass colour render pass shared by the present pass and the ImGui panel.
#pragma once

#include <vulkan/vulkan.h>

namespace wc::ui::vk {

// Clears the attachment, then leaves it in `final_layout` (PRESENT_SRC_KHR for a swapchain,
// TRANSFER_SRC_OPTIMAL for an offscreen target that is read back). The caller destroys it.
VkRenderPass create_color_render_pass(VkDevice device, VkFormat format, VkImageLayout final_layout);

VkFramebuffer create_framebuffer(VkDevice device, VkRenderPass render_pass, VkImageView view,
                                 VkExtent2D extent);

}  // namespace wc::ui::vk
