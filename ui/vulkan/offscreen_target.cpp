// Offscreen rendering and readback; see offscreen_target.h.
#include "ui/vulkan/offscreen_target.h"

#include "ui/vulkan/check.h"
#include "ui/vulkan/context.h"
#include "ui/vulkan/render_pass.h"

namespace wc::ui::vk {

OffscreenTarget::OffscreenTarget(const Context& context, uint32_t width, uint32_t height)
    : device_(context.device()) {
  image_ = std::make_unique<Image>(
      context, width, height, kFormat,
      VK_IMAGE_USAGE_COLOR_ATTACHMENT_BIT | VK_IMAGE_USAGE_TRANSFER_SRC_BIT);
  readback_ = std::make_unique<Buffer>(context, VkDeviceSize{width} * height * 4,
                                       VK_BUFFER_USAGE_TRANSFER_DST_BIT, kHostMemory);
  render_pass_ = create_color_render_pass(device_, kFormat, VK_IMAGE_LAYOUT_TRANSFER_SRC_OPTIMAL);
  framebuffer_ = create_framebuffer(device_, render_pass_, image_->view(), extent());
}

OffscreenTarget::~OffscreenTarget() {
  vkDestroyFramebuffer(device_, framebuffer_, nullptr);
  vkDestroyRenderPass(device_, render_pass_, nullptr);
}

void OffscreenTarget::begin(VkCommandBuffer cmd, const float clear[4]) const {
  VkClearValue clear_value{};
  for (int i = 0; i < 4; ++i) clear_value.color.float32[i] = clear[i];
  VkRenderPassBeginInfo begin{};
  begin.sType = VK_STRUCTURE_TYPE_RENDER_PASS_BEGIN_INFO;
  begin.renderPass = render_pass_;
  begin.framebuffer = framebuffer_;
  begin.renderArea = {{0, 0}, extent()};
  begin.clearValueCount = 1;
  begin.pClearValues = &clear_value;
  vkCmdBeginRenderPass(cmd, &begin, VK_SUBPASS_CONTENTS_INLINE);
}

void OffscreenTarget::record_readback(VkCommandBuffer cmd) const {
  // The render pass left the image in TRANSFER_SRC_OPTIMAL; its outgoing dependency orders
  // the colour writes before this copy.
  const VkBufferImageCopy region = whole_image_copy(image_->width(), image_->height());
  vkCmdCopyImageToBuffer(cmd, image_->handle(), VK_IMAGE_LAYOUT_TRANSFER_SRC_OPTIMAL,
                         readback_->handle(), 1, &region);
  VkBufferMemoryBarrier barrier{};
  barrier.sType = VK_STRUCTURE_TYPE_BUFFER_MEMORY_BARRIER;
  barrier.srcAccessMask = VK_ACCESS_TRANSFER_WRITE_BIT;
  barrier.dstAccessMask = VK_ACCESS_HOST_READ_BIT;
  barrier.srcQueueFamilyIndex = VK_QUEUE_FAMILY_IGNORED;
  barrier.dstQueueFamilyIndex = VK_QUEUE_FAMILY_IGNORED;
  barrier.buffer = readback_->handle();
  barrier.offset = 0;
  barrier.size = VK_WHOLE_SIZE;
  vkCmdPipelineBarrier(cmd, VK_PIPELINE_STAGE_TRANSFER_BIT, VK_PIPELINE_STAGE_HOST_BIT, 0, 0,
                       nullptr, 1, &barrier, 0, nullptr);
}

}  // namespace wc::ui::vk
