// The window's swapchain: images, views, framebuffers and one render-finished semaphore per
// image. See Note [Per-image semaphores].
#pragma once

#include <vulkan/vulkan.h>

#include <cstdint>
#include <vector>

namespace wc::ui::vk {

class Context;

// B8G8R8A8_UNORM or R8G8B8A8_UNORM when offered (frames are already sRGB-encoded, so an SRGB
// swapchain would encode them twice), else the surface's first format.
VkSurfaceFormatKHR choose_surface_format(const Context& context);

class Swapchain {
 public:
  // `render_pass` must use `format`; `extent` is the window's framebuffer size (non-zero).
  // `previous` (may be null) is retired in favour of the new swapchain.
  Swapchain(const Context& context, VkSurfaceFormatKHR format, VkRenderPass render_pass,
            VkExtent2D extent, bool vsync, Swapchain* previous);
  ~Swapchain();
  Swapchain(const Swapchain&) = delete;
  Swapchain& operator=(const Swapchain&) = delete;

  // VK_SUCCESS, VK_SUBOPTIMAL_KHR or VK_ERROR_OUT_OF_DATE_KHR (the caller rebuilds); throws on
  // anything else.
  VkResult acquire(VkSemaphore image_available, uint32_t* image_index);
  // Presents `image_index` once its render-finished semaphore is signalled; same results.
  VkResult present(VkQueue queue, uint32_t image_index);

  VkExtent2D extent() const { return extent_; }
  VkFormat format() const { return format_.format; }
  uint32_t image_count() const { return static_cast<uint32_t>(images_.size()); }
  uint32_t min_image_count() const { return min_image_count_; }
  VkImage image(uint32_t index) const { return images_[index]; }
  VkFramebuffer framebuffer(uint32_t index) const { return framebuffers_[index]; }
  VkSemaphore render_finished(uint32_t index) const { return render_finished_[index]; }
  // Whether images can be copied out (for F12 screenshots).
  bool can_copy_images() const { return can_copy_; }

 private:
  VkDevice device_ = VK_NULL_HANDLE;
  VkSwapchainKHR swapchain_ = VK_NULL_HANDLE;
  VkSurfaceFormatKHR format_{};
  VkExtent2D extent_{};
  uint32_t min_image_count_ = 2;
  bool can_copy_ = false;
  std::vector<VkImage> images_;
  std::vector<VkImageView> views_;
  std::vector<VkFramebuffer> framebuffers_;
  std::vector<VkSemaphore> render_finished_;
};

}  // namespace wc::ui::vk
