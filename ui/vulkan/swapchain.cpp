// Swapchain creation and the acquire/present calls.
//
// Note [Per-image semaphores]: the semaphore a submission signals for vkQueuePresentKHR to wait
// on must not be reused until that present has finished with it, and nothing but re-acquiring
// the same image tells us so. Indexing render-finished semaphores by frame in flight (as
// ImGui's helper window code did, imgui PR #9419) reuses one while a present may still hold it;
// indexing them by swapchain image is safe.
#include "ui/vulkan/swapchain.h"

#include <algorithm>

#include "engine/core/error.h"
#include "ui/vulkan/check.h"
#include "ui/vulkan/context.h"
#include "ui/vulkan/render_pass.h"

namespace wc::ui::vk {

VkSurfaceFormatKHR choose_surface_format(const Context& context) {
  uint32_t count = 0;
  vkGetPhysicalDeviceSurfaceFormatsKHR(context.physical_device(), context.surface(), &count,
                                       nullptr);
  std::vector<VkSurfaceFormatKHR> formats(count);
  vkGetPhysicalDeviceSurfaceFormatsKHR(context.physical_device(), context.surface(), &count,
                                       formats.data());
  if (formats.empty()) throw Error("vulkan", "the surface offers no formats");
  for (VkFormat wanted : {VK_FORMAT_B8G8R8A8_UNORM, VK_FORMAT_R8G8B8A8_UNORM}) {
    for (const auto& f : formats) {
      if (f.format == wanted && f.colorSpace == VK_COLOR_SPACE_SRGB_NONLINEAR_KHR) return f;
    }
  }
  return formats.front();
}

Swapchain::Swapchain(const Context& context, VkSurfaceFormatKHR format, VkRenderPass render_pass,
                     VkExtent2D extent, bool vsync, Swapchain* previous)
    : device_(context.device()), format_(format) {
  VkSurfaceCapabilitiesKHR caps{};
  check(vkGetPhysicalDeviceSurfaceCapabilitiesKHR(context.physical_device(), context.surface(),
                                                  &caps),
        "vkGetPhysicalDeviceSurfaceCapabilitiesKHR");
  if (caps.currentExtent.width != UINT32_MAX) {
    extent_ = caps.currentExtent;
  } else {
    extent_.width = std::clamp(extent.width, caps.minImageExtent.width, caps.maxImageExtent.width);
    extent_.height =
        std::clamp(extent.height, caps.minImageExtent.height, caps.maxImageExtent.height);
  }
  min_image_count_ = std::max(caps.minImageCount + 1, 2u);
  if (caps.maxImageCount > 0) min_image_count_ = std::min(min_image_count_, caps.maxImageCount);

  uint32_t mode_count = 0;
  vkGetPhysicalDeviceSurfacePresentModesKHR(context.physical_device(), context.surface(),
                                            &mode_count, nullptr);
  std::vector<VkPresentModeKHR> modes(mode_count);
  vkGetPhysicalDeviceSurfacePresentModesKHR(context.physical_device(), context.surface(),
                                            &mode_count, modes.data());
  VkPresentModeKHR mode = VK_PRESENT_MODE_FIFO_KHR;  // always supported
  if (!vsync) {
    for (VkPresentModeKHR candidate :
         {VK_PRESENT_MODE_MAILBOX_KHR, VK_PRESENT_MODE_IMMEDIATE_KHR}) {
      if (std::find(modes.begin(), modes.end(), candidate) != modes.end()) {
        mode = candidate;
        break;
      }
    }
  }

  can_copy_ = (caps.supportedUsageFlags & VK_IMAGE_USAGE_TRANSFER_SRC_BIT) != 0;
  VkSwapchainCreateInfoKHR info{};
  info.sType = VK_STRUCTURE_TYPE_SWAPCHAIN_CREATE_INFO_KHR;
  info.surface = context.surface();
  info.minImageCount = min_image_count_;
  info.imageFormat = format.format;
  info.imageColorSpace = format.colorSpace;
  info.imageExtent = extent_;
  info.imageArrayLayers = 1;
  info.imageUsage =
      VK_IMAGE_USAGE_COLOR_ATTACHMENT_BIT | (can_copy_ ? VK_IMAGE_USAGE_TRANSFER_SRC_BIT : 0);
  info.imageSharingMode = VK_SHARING_MODE_EXCLUSIVE;
  info.preTransform = caps.currentTransform;
  info.compositeAlpha = (caps.supportedCompositeAlpha & VK_COMPOSITE_ALPHA_OPAQUE_BIT_KHR)
                            ? VK_COMPOSITE_ALPHA_OPAQUE_BIT_KHR
                            : static_cast<VkCompositeAlphaFlagBitsKHR>(
                                  caps.supportedCompositeAlpha & -caps.supportedCompositeAlpha);
  info.presentMode = mode;
  info.clipped = VK_TRUE;
  info.oldSwapchain = previous ? previous->swapchain_ : VK_NULL_HANDLE;
  check(vkCreateSwapchainKHR(device_, &info, nullptr, &swapchain_), "vkCreateSwapchainKHR");

  uint32_t image_count = 0;
  vkGetSwapchainImagesKHR(device_, swapchain_, &image_count, nullptr);
  images_.resize(image_count);
  vkGetSwapchainImagesKHR(device_, swapchain_, &image_count, images_.data());
  for (VkImage image : images_) {
    VkImageViewCreateInfo view{};
    view.sType = VK_STRUCTURE_TYPE_IMAGE_VIEW_CREATE_INFO;
    view.image = image;
    view.viewType = VK_IMAGE_VIEW_TYPE_2D;
    view.format = format.format;
    view.subresourceRange = {VK_IMAGE_ASPECT_COLOR_BIT, 0, 1, 0, 1};
    VkImageView handle = VK_NULL_HANDLE;
    check(vkCreateImageView(device_, &view, nullptr, &handle), "vkCreateImageView(swapchain)");
    views_.push_back(handle);
    framebuffers_.push_back(create_framebuffer(device_, render_pass, handle, extent_));
    VkSemaphoreCreateInfo semaphore{};
    semaphore.sType = VK_STRUCTURE_TYPE_SEMAPHORE_CREATE_INFO;
    VkSemaphore finished = VK_NULL_HANDLE;
    check(vkCreateSemaphore(device_, &semaphore, nullptr, &finished), "vkCreateSemaphore");
    render_finished_.push_back(finished);
  }
}

Swapchain::~Swapchain() {
  for (VkSemaphore s : render_finished_) vkDestroySemaphore(device_, s, nullptr);
  for (VkFramebuffer f : framebuffers_) vkDestroyFramebuffer(device_, f, nullptr);
  for (VkImageView v : views_) vkDestroyImageView(device_, v, nullptr);
  vkDestroySwapchainKHR(device_, swapchain_, nullptr);
}

VkResult Swapchain::acquire(VkSemaphore image_available, uint32_t* image_index) {
  const VkResult result = vkAcquireNextImageKHR(device_, swapchain_, UINT64_MAX, image_available,
                                                VK_NULL_HANDLE, image_index);
  if (result != VK_SUCCESS && result != VK_SUBOPTIMAL_KHR && result != VK_ERROR_OUT_OF_DATE_KHR) {
    check(result, "vkAcquireNextImageKHR");
  }
  return result;
}

VkResult Swapchain::present(VkQueue queue, uint32_t image_index) {
  VkPresentInfoKHR info{};
  info.sType = VK_STRUCTURE_TYPE_PRESENT_INFO_KHR;
  info.waitSemaphoreCount = 1;
  info.pWaitSemaphores = &render_finished_[image_index];
  info.swapchainCount = 1;
  info.pSwapchains = &swapchain_;
  info.pImageIndices = &image_index;
  const VkResult result = vkQueuePresentKHR(queue, &info);
  if (result != VK_SUCCESS && result != VK_SUBOPTIMAL_KHR && result != VK_ERROR_OUT_OF_DATE_KHR) {
    check(result, "vkQueuePresentKHR");
  }
  return result;
}

}  // namespace wc::ui::vk
