// Dear ImGui 1.86 (Debian) on our window and render pass: its GLFW and Vulkan backends, with
// the swapchain, render pass and command buffers owned by us (never ImGui_ImplVulkanH_*).
#pragma once

#include <vulkan/vulkan.h>

#include <cstdint>

struct GLFWwindow;

namespace wc::ui {

namespace vk {
class Context;
}

class ImGuiLayer {
 public:
  // Installs ImGui's GLFW callbacks, which chain to callbacks set on `window` before this call.
  // Uploads the font atlas through a one-time command buffer.
  ImGuiLayer(vk::Context& context, GLFWwindow* window, VkRenderPass render_pass,
             uint32_t min_image_count, uint32_t image_count);
  ~ImGuiLayer();
  ImGuiLayer(const ImGuiLayer&) = delete;
  ImGuiLayer& operator=(const ImGuiLayer&) = delete;

  // Starts an ImGui frame; build widgets after this.
  void begin_frame();
  // Ends the frame and records its draw commands into the active render pass.
  void render(VkCommandBuffer cmd);
  // After a swapchain rebuild.
  void set_min_image_count(uint32_t count);
  // True while a text field has focus, so game keys should be ignored.
  bool wants_text_input() const;

 private:
  void shutdown();

  VkDevice device_ = VK_NULL_HANDLE;
  VkDescriptorPool pool_ = VK_NULL_HANDLE;
  bool vulkan_ready_ = false;
  bool glfw_ready_ = false;
};

}  // namespace wc::ui
