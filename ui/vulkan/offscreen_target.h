// An offscreen colour target (RGBA8 UNORM) with its render pass, framebuffer and a host-visible
// readback buffer: the headless stand-in for a swapchain image.
#pragma once

#include <vulkan/vulkan.h>

#include <cstdint>
#include <memory>

#include "ui/vulkan/buffer.h"
#include "ui/vulkan/image.h"

namespace wc::ui::vk {

class Context;

class OffscreenTarget {
 public:
  static constexpr VkFormat kFormat = VK_FORMAT_R8G8B8A8_UNORM;

  OffscreenTarget(const Context& context, uint32_t width, uint32_t height);
  ~OffscreenTarget();
  OffscreenTarget(const OffscreenTarget&) = delete;
  OffscreenTarget& operator=(const OffscreenTarget&) = delete;

  VkRenderPass render_pass() const { return render_pass_; }
  VkFramebuffer framebuffer() const { return framebuffer_; }
  VkExtent2D extent() const { return {image_->width(), image_->height()}; }

  // Begins the render pass, clearing to `clear` (RGBA).
  void begin(VkCommandBuffer cmd, const float clear[4]) const;
  // After the render pass: copies the image into the readback buffer and makes it host-visible.
  void record_readback(VkCommandBuffer cmd) const;
  // The read-back RGBA8 pixels (width*height*4, tightly packed), valid once the commands ran.
  const uint8_t* pixels() const { return static_cast<const uint8_t*>(readback_->mapped()); }

 private:
  VkDevice device_ = VK_NULL_HANDLE;
  std::unique_ptr<Image> image_;
  std::unique_ptr<Buffer> readback_;
  VkRenderPass render_pass_ = VK_NULL_HANDLE;
  VkFramebuffer framebuffer_ = VK_NULL_HANDLE;
};

}  // namespace wc::ui::vk
