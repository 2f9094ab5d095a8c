// One synchronous offscreen frame per render() call; see headless_renderer.h.
#include "ui/frames/headless_renderer.h"

#include "ui/vulkan/check.h"
#include "ui/vulkan/context.h"
#include "ui/vulkan/submit.h"

namespace wc::ui {

HeadlessRenderer::HeadlessRenderer(vk::Context& context, int frame_width, int frame_height,
                                   int target_width, int target_height)
    : HeadlessRenderer(context, std::make_unique<CpuFrameSink>(context, frame_width, frame_height),
                       target_width, target_height) {}

HeadlessRenderer::HeadlessRenderer(vk::Context& context, std::unique_ptr<FrameSink> sink,
                                   int target_width, int target_height)
    : context_(context), sink_(std::move(sink)) {
  target_ = std::make_unique<vk::OffscreenTarget>(context, static_cast<uint32_t>(target_width),
                                                  static_cast<uint32_t>(target_height));
  present_ = std::make_unique<PresentPass>(context, target_->render_pass(), sink_->image_view(),
                                           sink_->width(), sink_->height());
  VkDevice device = context.device();
  VkCommandPoolCreateInfo pool{};
  pool.sType = VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO;
  pool.flags = VK_COMMAND_POOL_CREATE_RESET_COMMAND_BUFFER_BIT;
  pool.queueFamilyIndex = context.queue_family();
  vk::check(vkCreateCommandPool(device, &pool, nullptr, &pool_), "vkCreateCommandPool");
  VkCommandBufferAllocateInfo alloc{};
  alloc.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO;
  alloc.commandPool = pool_;
  alloc.level = VK_COMMAND_BUFFER_LEVEL_PRIMARY;
  alloc.commandBufferCount = 1;
  vk::check(vkAllocateCommandBuffers(device, &alloc, &cmd_), "vkAllocateCommandBuffers");
  VkFenceCreateInfo fence{};
  fence.sType = VK_STRUCTURE_TYPE_FENCE_CREATE_INFO;
  vk::check(vkCreateFence(device, &fence, nullptr, &fence_), "vkCreateFence");
}

HeadlessRenderer::~HeadlessRenderer() {
  VkDevice device = context_.device();
  vkDeviceWaitIdle(device);
  vkDestroyFence(device, fence_, nullptr);
  vkDestroyCommandPool(device, pool_, nullptr);
}

const uint8_t* HeadlessRenderer::render(const PresentSettings& settings) {
  vk::check(vkResetCommandBuffer(cmd_, 0), "vkResetCommandBuffer");
  VkCommandBufferBeginInfo begin{};
  begin.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO;
  begin.flags = VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT;
  vk::check(vkBeginCommandBuffer(cmd_, &begin), "vkBeginCommandBuffer");
  vk::SubmitSync sync;
  sink_->record_upload(cmd_, &sync);
  target_->begin(cmd_, settings.bar_color.data());
  present_->record(cmd_, target_->extent(), settings);
  vkCmdEndRenderPass(cmd_);
  target_->record_readback(cmd_);
  vk::check(vkEndCommandBuffer(cmd_), "vkEndCommandBuffer");
  vk::submit(context_.queue(), cmd_, sync, fence_);
  vk::check(vkWaitForFences(context_.device(), 1, &fence_, VK_TRUE, UINT64_MAX), "vkWaitForFences");
  vk::check(vkResetFences(context_.device(), 1, &fence_), "vkResetFences");
  return target_->pixels();
}

}  // namespace wc::ui
