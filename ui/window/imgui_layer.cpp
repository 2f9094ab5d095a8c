// ImGui setup for the 1.86 API: ImGui_ImplVulkan_Init(&info, render_pass), fonts uploaded with
// CreateFontsTexture(cmd) on a one-time command buffer, then DestroyFontUploadObjects.
#include "ui/window/imgui_layer.h"

#include <backends/imgui_impl_glfw.h>
#include <backends/imgui_impl_vulkan.h>
#include <imgui.h>

#include "engine/core/error.h"
#include "engine/core/log.h"
#include "ui/vulkan/check.h"
#include "ui/vulkan/context.h"

namespace wc::ui {
namespace {

void check_imgui_vk(VkResult result) {
  if (result != VK_SUCCESS) log_error("imgui vulkan backend: ", vk::result_name(result));
}

}  // namespace

ImGuiLayer::ImGuiLayer(vk::Context& context, GLFWwindow* window, VkRenderPass render_pass,
                       uint32_t min_image_count, uint32_t image_count)
    : device_(context.device()) {
  // The 1.86 backend allocates one descriptor set (the font); FREE bit as in its example.
  VkDescriptorPoolSize size{VK_DESCRIPTOR_TYPE_COMBINED_IMAGE_SAMPLER, 4};
  VkDescriptorPoolCreateInfo pool{};
  pool.sType = VK_STRUCTURE_TYPE_DESCRIPTOR_POOL_CREATE_INFO;
  pool.flags = VK_DESCRIPTOR_POOL_CREATE_FREE_DESCRIPTOR_SET_BIT;
  pool.maxSets = 4;
  pool.poolSizeCount = 1;
  pool.pPoolSizes = &size;
  vk::check(vkCreateDescriptorPool(device_, &pool, nullptr, &pool_),
            "vkCreateDescriptorPool(imgui)");

  IMGUI_CHECKVERSION();
  ImGui::CreateContext();
  ImGuiIO& io = ImGui::GetIO();
  io.IniFilename = nullptr;  // never write imgui.ini into the working directory
  ImGui::StyleColorsDark();

  try {
    if (!ImGui_ImplGlfw_InitForVulkan(window, true))
      throw Error("imgui", "GLFW backend init failed");
    glfw_ready_ = true;
    ImGui_ImplVulkan_InitInfo info{};
    info.Instance = context.instance();
    info.PhysicalDevice = context.physical_device();
    info.Device = context.device();
    info.QueueFamily = context.queue_family();
    info.Queue = context.queue();
    info.DescriptorPool = pool_;
    info.Subpass = 0;
    info.MinImageCount = min_image_count;
    info.ImageCount = image_count;
    info.MSAASamples = VK_SAMPLE_COUNT_1_BIT;
    info.CheckVkResultFn = check_imgui_vk;
    if (!ImGui_ImplVulkan_Init(&info, render_pass))
      throw Error("imgui", "Vulkan backend init failed");
    vulkan_ready_ = true;
    context.submit_and_wait([](VkCommandBuffer cmd) { ImGui_ImplVulkan_CreateFontsTexture(cmd); });
    ImGui_ImplVulkan_DestroyFontUploadObjects();
  } catch (...) {
    shutdown();
    throw;
  }
}

ImGuiLayer::~ImGuiLayer() {
  shutdown();
}

void ImGuiLayer::shutdown() {
  if (device_ == VK_NULL_HANDLE) return;
  vkDeviceWaitIdle(device_);
  if (vulkan_ready_) ImGui_ImplVulkan_Shutdown();
  if (glfw_ready_) ImGui_ImplGlfw_Shutdown();
  if (ImGui::GetCurrentContext()) ImGui::DestroyContext();
  vkDestroyDescriptorPool(device_, pool_, nullptr);
  device_ = VK_NULL_HANDLE;
}

void ImGuiLayer::begin_frame() {
  ImGui_ImplVulkan_NewFrame();
  ImGui_ImplGlfw_NewFrame();
  ImGui::NewFrame();
}

void ImGuiLayer::render(VkCommandBuffer cmd) {
  ImGui::Render();
  ImGui_ImplVulkan_RenderDrawData(ImGui::GetDrawData(), cmd);
}

void ImGuiLayer::set_min_image_count(uint32_t count) {
  ImGui_ImplVulkan_SetMinImageCount(count);
}

bool ImGuiLayer::wants_text_input() const {
  return ImGui::GetIO().WantTextInput;
}

}  // namespace wc::ui
