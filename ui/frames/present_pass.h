// shaders/present: draws the frame sink's image into the current render pass with a full-screen
// triangle, letterboxed, nearest or bilinear. Used unchanged by the window and headless modes.
#pragma once

#include <vulkan/vulkan.h>

#include <array>

#include "ui/frames/letterbox.h"

namespace wc::ui {

namespace vk {
class Context;
}

struct PresentSettings {
  Filter filter = Filter::kNearest;
  ScaleMode scale_mode = ScaleMode::kInteger;
  std::array<float, 4> bar_color{0.0f, 0.0f, 0.0f, 1.0f};
};

class PresentPass {
 public:
  // `frame_view` is the sink's sampled image; the pipeline is built for `render_pass`
  // (any render pass compatible with it works, e.g. one per swapchain format).
  PresentPass(const vk::Context& context, VkRenderPass render_pass, VkImageView frame_view,
              int frame_width, int frame_height);
  ~PresentPass();
  PresentPass(const PresentPass&) = delete;
  PresentPass& operator=(const PresentPass&) = delete;

  // Records the draw inside an active render pass covering `target`; returns the frame's rect.
  Rect record(VkCommandBuffer cmd, VkExtent2D target, const PresentSettings& settings) const;

 private:
  VkDevice device_ = VK_NULL_HANDLE;
  int frame_width_;
  int frame_height_;
  VkSampler sampler_ = VK_NULL_HANDLE;
  VkDescriptorSetLayout set_layout_ = VK_NULL_HANDLE;
  VkDescriptorPool pool_ = VK_NULL_HANDLE;
  VkDescriptorSet set_ = VK_NULL_HANDLE;
  VkPipelineLayout layout_ = VK_NULL_HANDLE;
  VkPipeline pipeline_ = VK_NULL_HANDLE;
};

}  // namespace wc::ui
