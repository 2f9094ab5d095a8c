// A device-local 2D colour image (optimal tiling) with one view, plus the layout-transition
// helper every pass uses.
#pragma once

#include <vulkan/vulkan.h>

#include <cstdint>

namespace wc::ui::vk {

class Context;

class Image {
 public:
  Image(const Context& context, uint32_t width, uint32_t height, VkFormat format,
        VkImageUsageFlags usage);
  ~Image();
  Image(const Image&) = delete;
  Image& operator=(const Image&) = delete;

  VkImage handle() const { return image_; }
  VkImageView view() const { return view_; }
  VkFormat format() const { return format_; }
  uint32_t width() const { return width_; }
  uint32_t height() const { return height_; }

 private:
  VkDevice device_ = VK_NULL_HANDLE;
  VkImage image_ = VK_NULL_HANDLE;
  VkDeviceMemory memory_ = VK_NULL_HANDLE;
  VkImageView view_ = VK_NULL_HANDLE;
  VkFormat format_ = VK_FORMAT_UNDEFINED;
  uint32_t width_ = 0;
  uint32_t height_ = 0;
};

// One image memory barrier on the whole colour image (single mip, single layer).
struct ImageTransition {
  VkImageLayout old_layout;
  VkImageLayout new_layout;
  VkPipelineStageFlags src_stage;
  VkAccessFlags src_access;
  VkPipelineStageFlags dst_stage;
  VkAccessFlags dst_access;
};
void record_transition(VkCommandBuffer cmd, VkImage image, const ImageTransition& t);

// A tightly packed buffer <-> whole-image copy region.
VkBufferImageCopy whole_image_copy(uint32_t width, uint32_t height);

}  // namespace wc::ui::vk
