// The offscreen renderer: frame sink -> present pass -> offscreen image -> host readback, the
// same pipeline the window uses with an offscreen target in place of the swapchain.
#pragma once

#include <vulkan/vulkan.h>

#include <cstdint>
#include <memory>

#include "ui/frames/cpu_frame_sink.h"
#include "ui/frames/present_pass.h"
#include "ui/vulkan/offscreen_target.h"

namespace wc::ui {

namespace vk {
class Context;
}

class HeadlessRenderer {
 public:
  HeadlessRenderer(vk::Context& context, int frame_width, int frame_height, int target_width,
                   int target_height);
  // With a given sink (e.g. from make_frame_sink, frame_path.h); the frame size is the sink's.
  HeadlessRenderer(vk::Context& context, std::unique_ptr<FrameSink> sink, int target_width,
                   int target_height);
  ~HeadlessRenderer();
  HeadlessRenderer(const HeadlessRenderer&) = delete;
  HeadlessRenderer& operator=(const HeadlessRenderer&) = delete;

  // Where producers publish frames (see frame_producer.h).
  FrameSink& sink() { return *sink_; }

  // Uploads the newest published frame (if any is new), draws it letterboxed into the target
  // and reads the target back; blocks until done. Returns target_width*target_height*4 RGBA8
  // bytes, valid until the next render().
  const uint8_t* render(const PresentSettings& settings);

  int target_width() const { return static_cast<int>(target_->extent().width); }
  int target_height() const { return static_cast<int>(target_->extent().height); }

 private:
  vk::Context& context_;
  std::unique_ptr<FrameSink> sink_;
  std::unique_ptr<vk::OffscreenTarget> target_;
  std::unique_ptr<PresentPass> present_;
  VkCommandPool pool_ = VK_NULL_HANDLE;
  VkCommandBuffer cmd_ = VK_NULL_HANDLE;
  VkFence fence_ = VK_NULL_HANDLE;
};

}  // namespace wc::ui
