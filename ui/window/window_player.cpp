// The windowed player: GLFW events and keys, the inference thread producing frames, and the
// render loop (swapchain acquire -> sink upload -> present pass -> panel -> submit -> present),
// with swapchain rebuilds on resize/out-of-date and minimised windows skipped.
#include "ui/window/window_player.h"

#define GLFW_INCLUDE_NONE  // no OpenGL headers (absent on the GPU machine)
#define GLFW_INCLUDE_VULKAN
#include <GLFW/glfw3.h>

#include <imgui.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <memory>

#include "engine/core/error.h"
#include "engine/core/log.h"
#include "engine/core/timing.h"
#include "engine/game/action.h"
#include "ui/frames/cpu_frame_sink.h"
#include "ui/frames/screenshot.h"
#include "ui/inference/inference_thread.h"
#include "ui/vulkan/buffer.h"
#include "ui/vulkan/check.h"
#include "ui/vulkan/context.h"
#include "ui/vulkan/image.h"
#include "ui/vulkan/render_pass.h"
#include "ui/vulkan/submit.h"
#include "ui/vulkan/swapchain.h"
#include "ui/window/imgui_layer.h"
#include "ui/window/panel.h"
#include "ui/window/panel_model.h"
#include "ui/window/player_input.h"

namespace wc::ui {
namespace {

constexpr int kFramesInFlight = 2;

// glfwInit/glfwTerminate for the lifetime of one player.
class GlfwSession {
 public:
  GlfwSession() {
    glfwSetErrorCallback([](int code, const char* text) { log_error("glfw ", code, ": ", text); });
    if (!glfwInit()) throw Error("glfw", "glfwInit failed (no display? use --headless)");
    if (!glfwVulkanSupported()) {
      glfwTerminate();
      throw Error("glfw", "no Vulkan loader/ICD usable for windows");
    }
  }
  ~GlfwSession() { glfwTerminate(); }
  GlfwSession(const GlfwSession&) = delete;
  GlfwSession& operator=(const GlfwSession&) = delete;
};

class Window {
 public:
  Window(int width, int height, const std::string& title) {
    glfwWindowHint(GLFW_CLIENT_API, GLFW_NO_API);
    glfwWindowHint(GLFW_RESIZABLE, GLFW_TRUE);
    window_ = glfwCreateWindow(width, height, title.c_str(), nullptr, nullptr);
    if (!window_) throw Error("glfw", "glfwCreateWindow failed");
  }
  ~Window() { glfwDestroyWindow(window_); }
  Window(const Window&) = delete;
  Window& operator=(const Window&) = delete;
  GLFWwindow* get() const { return window_; }

 private:
  GLFWwindow* window_ = nullptr;
};

// Per frame-in-flight resources (the per-image ones live in the swapchain).
struct FrameSlot {
  VkCommandBuffer cmd = VK_NULL_HANDLE;
  VkFence fence = VK_NULL_HANDLE;
  VkSemaphore image_available = VK_NULL_HANDLE;
};

class WindowPlayer {
 public:
  WindowPlayer(const WindowOptions& options, FrameSource& source, PolicyControl* control);
  ~WindowPlayer();
  WindowReport run();

 private:
  static void on_key(GLFWwindow* window, int key, int scancode, int action, int mods);
  static void on_resize(GLFWwindow* window, int width, int height);

  void rebuild_swapchain(VkExtent2D extent);
  // Keys and panel intents of this frame -> inference commands; returns whether to screenshot.
  bool dispatch(const PlayerCommands& commands);
  // Renders and presents one frame; false when it was skipped (out-of-date swapchain).
  bool render_frame(bool take_screenshot, const LiveStats* stats);
  void record_screenshot_copy(VkCommandBuffer cmd, uint32_t image_index);
  void save_screenshot();
  PanelView panel_view() const;

  const WindowOptions options_;
  FrameSource& source_;
  GlfwSession glfw_;
  std::unique_ptr<Window> window_;
  int initial_width_ = 0;
  int initial_height_ = 0;
  std::unique_ptr<vk::Context> context_;
  VkSurfaceFormatKHR surface_format_{};
  VkRenderPass render_pass_ = VK_NULL_HANDLE;
  std::unique_ptr<vk::Swapchain> swapchain_;
  std::unique_ptr<FrameSink> sink_;
  std::unique_ptr<InferenceThread> inference_;
  std::unique_ptr<PresentPass> present_;
  std::unique_ptr<ImGuiLayer> imgui_;
  VkCommandPool command_pool_ = VK_NULL_HANDLE;
  FrameSlot slots_[kFramesInFlight];
  int slot_ = 0;
  std::unique_ptr<vk::Buffer> screenshot_buffer_;
  VkExtent2D screenshot_extent_{};

  PlayerInput input_;
  PresentSettings present_settings_;
  PanelRequests panel_requests_;
  PanelModel panel_model_;
  bool resized_ = false;
  bool reanchor_panel_ = false;
  std::string last_screenshot_;
  WindowReport report_;
  std::vector<double> all_frame_ms_;
};

WindowPlayer::WindowPlayer(const WindowOptions& options, FrameSource& source,
                           PolicyControl* control)
    : options_(options),
      source_(source),
      present_settings_(options.present),
      panel_model_(options.seed, options.record_dir) {
  const int scale = std::max(options.scale, 1);
  // Room for the panel on both sides keeps the frame centred and uncovered.
  const int panel_room = 2 * (static_cast<int>(kPanelWidth) + 16);
  initial_width_ = source.width() * scale + panel_room;
  initial_height_ = source.height() * scale;
  window_ =
      std::make_unique<Window>(initial_width_, initial_height_, "worldcast - " + source.name());
  glfwSetWindowUserPointer(window_->get(), this);
  // Set before ImGui installs its callbacks, which chain to these.
  glfwSetKeyCallback(window_->get(), on_key);
  glfwSetFramebufferSizeCallback(window_->get(), on_resize);

  vk::ContextOptions context_options;
  context_options.validation = options.validate;
  uint32_t extension_count = 0;
  const char** extensions = glfwGetRequiredInstanceExtensions(&extension_count);
  if (!extensions) throw Error("glfw", "no Vulkan surface extensions for this window system");
  for (uint32_t i = 0; i < extension_count; ++i)
    context_options.instance_extensions.push_back(extensions[i]);
  GLFWwindow* window = window_->get();
  context_options.make_surface = [window](VkInstance instance) {
    VkSurfaceKHR surface = VK_NULL_HANDLE;
    vk::check(glfwCreateWindowSurface(instance, window, nullptr, &surface),
              "glfwCreateWindowSurface");
    return surface;
  };
  if (options.route.prepare_context) options.route.prepare_context(&context_options);
  context_ = std::make_unique<vk::Context>(context_options);
  VkDevice device = context_->device();

  surface_format_ = vk::choose_surface_format(*context_);
  render_pass_ =
      vk::create_color_render_pass(device, surface_format_.format, VK_IMAGE_LAYOUT_PRESENT_SRC_KHR);
  int width = 0;
  int height = 0;
  glfwGetFramebufferSize(window, &width, &height);
  rebuild_swapchain(
      {static_cast<uint32_t>(std::max(width, 1)), static_cast<uint32_t>(std::max(height, 1))});

  if (options.route.make_sink) {
    sink_ = options.route.make_sink(*context_, source.width(), source.height());
  } else {
    sink_ = std::make_unique<CpuFrameSink>(*context_, source.width(), source.height());
  }
  InferenceOptions inference;
  inference.seed = options.seed;
  inference.script = options.actions;
  inference.paced = options.paced;
  inference.frame_rate = options.frame_rate;
  inference.record_meta = options.record_meta;
  inference.route = options.route;
  inference_ = std::make_unique<InferenceThread>(source, *sink_, control, std::move(inference));
  present_ = std::make_unique<PresentPass>(*context_, render_pass_, sink_->image_view(),
                                           source.width(), source.height());
  imgui_ = std::make_unique<ImGuiLayer>(*context_, window, render_pass_,
                                        swapchain_->min_image_count(), swapchain_->image_count());

  VkCommandPoolCreateInfo pool{};
  pool.sType = VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO;
  pool.flags = VK_COMMAND_POOL_CREATE_RESET_COMMAND_BUFFER_BIT;
  pool.queueFamilyIndex = context_->queue_family();
  vk::check(vkCreateCommandPool(device, &pool, nullptr, &command_pool_), "vkCreateCommandPool");
  for (FrameSlot& slot : slots_) {
    VkCommandBufferAllocateInfo alloc{};
    alloc.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO;
    alloc.commandPool = command_pool_;
    alloc.level = VK_COMMAND_BUFFER_LEVEL_PRIMARY;
    alloc.commandBufferCount = 1;
    vk::check(vkAllocateCommandBuffers(device, &alloc, &slot.cmd), "vkAllocateCommandBuffers");
    VkFenceCreateInfo fence{};
    fence.sType = VK_STRUCTURE_TYPE_FENCE_CREATE_INFO;
    fence.flags = VK_FENCE_CREATE_SIGNALED_BIT;
    vk::check(vkCreateFence(device, &fence, nullptr, &slot.fence), "vkCreateFence");
    VkSemaphoreCreateInfo semaphore{};
    semaphore.sType = VK_STRUCTURE_TYPE_SEMAPHORE_CREATE_INFO;
    vk::check(vkCreateSemaphore(device, &semaphore, nullptr, &slot.image_available),
              "vkCreateSemaphore");
  }
  inference_->start();  // resets the source to options.seed on its own thread
}

WindowPlayer::~WindowPlayer() {
  if (!context_) return;
  if (inference_) inference_->stop();  // before the sink it publishes into goes away
  VkDevice device = context_->device();
  vkDeviceWaitIdle(device);
  imgui_.reset();
  for (FrameSlot& slot : slots_) {
    vkDestroyFence(device, slot.fence, nullptr);
    vkDestroySemaphore(device, slot.image_available, nullptr);
  }
  vkDestroyCommandPool(device, command_pool_, nullptr);
  present_.reset();
  inference_.reset();
  sink_.reset();
  screenshot_buffer_.reset();
  swapchain_.reset();
  vkDestroyRenderPass(device, render_pass_, nullptr);
  context_.reset();
}

void WindowPlayer::on_key(GLFWwindow* window, int key, int, int action, int) {
  auto* player = static_cast<WindowPlayer*>(glfwGetWindowUserPointer(window));
  if (player->imgui_ && player->imgui_->wants_text_input()) return;
  player->input_.on_key(key, action);
}

void WindowPlayer::on_resize(GLFWwindow* window, int, int) {
  static_cast<WindowPlayer*>(glfwGetWindowUserPointer(window))->resized_ = true;
}

void WindowPlayer::rebuild_swapchain(VkExtent2D extent) {
  vkDeviceWaitIdle(context_->device());  // the old images may still be in flight
  auto next = std::make_unique<vk::Swapchain>(*context_, surface_format_, render_pass_, extent,
                                              options_.vsync, swapchain_.get());
  swapchain_ = std::move(next);
  if (imgui_) imgui_->set_min_image_count(swapchain_->min_image_count());
  ++report_.swapchain_rebuilds;
  resized_ = false;
  reanchor_panel_ = true;
}

bool WindowPlayer::dispatch(const PlayerCommands& commands) {
  // Keys take the same PanelModel paths as the panel's buttons.
  if (commands.toggle_pause) panel_model_.toggle_pause();
  if (commands.single_step) panel_model_.single_step();
  if (commands.reset) panel_model_.reset();
  if (commands.record) {
    const std::shared_ptr<const LiveStats> stats = inference_->stats();
    panel_model_.toggle_recording(stats && stats->recording);
  }
  for (InferenceCommand& command : panel_model_.take_commands()) {
    inference_->send(std::move(command));
  }
  inference_->offer_action(input_.current_action());
  return commands.screenshot;
}

PanelView WindowPlayer::panel_view() const {
  PanelView view;
  view.frame_width = source_.width();  // fixed at creation: safe to read from this thread
  view.frame_height = source_.height();
  view.held_action = game::action_name(input_.current_action());
  view.filter = present_settings_.filter;
  view.scale_mode = present_settings_.scale_mode;
  view.device_name = context_->device_name();
  view.validation_errors = context_->validation_errors();
  view.last_screenshot = last_screenshot_;
  view.reanchor = reanchor_panel_;
  return view;
}

bool WindowPlayer::render_frame(bool take_screenshot, const LiveStats* stats) {
  VkDevice device = context_->device();
  FrameSlot& slot = slots_[slot_];
  vk::check(vkWaitForFences(device, 1, &slot.fence, VK_TRUE, UINT64_MAX), "vkWaitForFences");

  uint32_t image_index = 0;
  const VkResult acquired = swapchain_->acquire(slot.image_available, &image_index);
  if (acquired == VK_ERROR_OUT_OF_DATE_KHR) {
    resized_ = true;  // rebuilt at the top of the next iteration
    return false;
  }
  if (acquired == VK_SUBOPTIMAL_KHR) resized_ = true;
  // Reset only once work will surely be submitted, or the next wait would never return.
  vk::check(vkResetFences(device, 1, &slot.fence), "vkResetFences");

  VkCommandBuffer cmd = slot.cmd;
  vk::check(vkResetCommandBuffer(cmd, 0), "vkResetCommandBuffer");
  VkCommandBufferBeginInfo begin{};
  begin.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO;
  begin.flags = VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT;
  vk::check(vkBeginCommandBuffer(cmd, &begin), "vkBeginCommandBuffer");

  vk::SubmitSync sync;
  sink_->record_upload(cmd, &sync);

  VkClearValue clear{};
  for (int i = 0; i < 4; ++i)
    clear.color.float32[i] = present_settings_.bar_color[static_cast<size_t>(i)];
  VkRenderPassBeginInfo pass{};
  pass.sType = VK_STRUCTURE_TYPE_RENDER_PASS_BEGIN_INFO;
  pass.renderPass = render_pass_;
  pass.framebuffer = swapchain_->framebuffer(image_index);
  pass.renderArea = {{0, 0}, swapchain_->extent()};
  pass.clearValueCount = 1;
  pass.pClearValues = &clear;
  vkCmdBeginRenderPass(cmd, &pass, VK_SUBPASS_CONTENTS_INLINE);
  present_->record(cmd, swapchain_->extent(), present_settings_);
  imgui_->begin_frame();
  panel_requests_ = draw_panel(panel_view(), stats, panel_model_);
  reanchor_panel_ = false;
  imgui_->render(cmd);
  vkCmdEndRenderPass(cmd);

  const bool screenshot = take_screenshot && swapchain_->can_copy_images();
  if (take_screenshot && !screenshot) log_warning("screenshot: this swapchain cannot be copied");
  if (screenshot) record_screenshot_copy(cmd, image_index);
  vk::check(vkEndCommandBuffer(cmd), "vkEndCommandBuffer");

  sync.wait(slot.image_available, VK_PIPELINE_STAGE_COLOR_ATTACHMENT_OUTPUT_BIT);
  sync.signal(swapchain_->render_finished(image_index));  // See Note [Per-image semaphores]
  vk::submit(context_->queue(), cmd, sync, slot.fence);
  const VkResult presented = swapchain_->present(context_->queue(), image_index);
  if (presented == VK_ERROR_OUT_OF_DATE_KHR || presented == VK_SUBOPTIMAL_KHR) resized_ = true;

  if (screenshot) {
    vk::check(vkWaitForFences(device, 1, &slot.fence, VK_TRUE, UINT64_MAX), "vkWaitForFences");
    save_screenshot();
  }
  slot_ = (slot_ + 1) % kFramesInFlight;
  return true;
}

void WindowPlayer::record_screenshot_copy(VkCommandBuffer cmd, uint32_t image_index) {
  const VkExtent2D extent = swapchain_->extent();
  const VkDeviceSize bytes = VkDeviceSize{extent.width} * extent.height * 4;
  if (!screenshot_buffer_ || screenshot_buffer_->size() < bytes) {
    screenshot_buffer_.reset();
    screenshot_buffer_ = std::make_unique<vk::Buffer>(
        *context_, bytes, VK_BUFFER_USAGE_TRANSFER_DST_BIT, vk::kHostMemory);
  }
  screenshot_extent_ = extent;
  VkImage image = swapchain_->image(image_index);
  vk::record_transition(
      cmd, image,
      {VK_IMAGE_LAYOUT_PRESENT_SRC_KHR, VK_IMAGE_LAYOUT_TRANSFER_SRC_OPTIMAL,
       VK_PIPELINE_STAGE_COLOR_ATTACHMENT_OUTPUT_BIT, VK_ACCESS_COLOR_ATTACHMENT_WRITE_BIT,
       VK_PIPELINE_STAGE_TRANSFER_BIT, VK_ACCESS_TRANSFER_READ_BIT});
  const VkBufferImageCopy region = vk::whole_image_copy(extent.width, extent.height);
  vkCmdCopyImageToBuffer(cmd, image, VK_IMAGE_LAYOUT_TRANSFER_SRC_OPTIMAL,
                         screenshot_buffer_->handle(), 1, &region);
  vk::record_transition(
      cmd, image,
      {VK_IMAGE_LAYOUT_TRANSFER_SRC_OPTIMAL, VK_IMAGE_LAYOUT_PRESENT_SRC_KHR,
       VK_PIPELINE_STAGE_TRANSFER_BIT, 0, VK_PIPELINE_STAGE_BOTTOM_OF_PIPE_BIT, 0});
  VkBufferMemoryBarrier barrier{};
  barrier.sType = VK_STRUCTURE_TYPE_BUFFER_MEMORY_BARRIER;
  barrier.srcAccessMask = VK_ACCESS_TRANSFER_WRITE_BIT;
  barrier.dstAccessMask = VK_ACCESS_HOST_READ_BIT;
  barrier.srcQueueFamilyIndex = VK_QUEUE_FAMILY_IGNORED;
  barrier.dstQueueFamilyIndex = VK_QUEUE_FAMILY_IGNORED;
  barrier.buffer = screenshot_buffer_->handle();
  barrier.size = VK_WHOLE_SIZE;
  vkCmdPipelineBarrier(cmd, VK_PIPELINE_STAGE_TRANSFER_BIT, VK_PIPELINE_STAGE_HOST_BIT, 0, 0,
                       nullptr, 1, &barrier, 0, nullptr);
}

void WindowPlayer::save_screenshot() {
  const size_t pixels = size_t{screenshot_extent_.width} * screenshot_extent_.height;
  const auto* data = static_cast<const uint8_t*>(screenshot_buffer_->mapped());
  std::vector<uint8_t> rgba;
  if (swapchain_->format() == VK_FORMAT_B8G8R8A8_UNORM ||
      swapchain_->format() == VK_FORMAT_B8G8R8A8_SRGB) {
    rgba = bgra_to_rgba(data, pixels);
  } else {
    rgba.assign(data, data + pixels * 4);
    for (size_t i = 0; i < pixels; ++i) rgba[i * 4 + 3] = 255;
  }
  std::string path = options_.screenshot_path;
  if (path.empty()) {
    char name[64];
    std::snprintf(name, sizeof(name), "worldcast_%05d.png",
                  static_cast<int>(report_.screenshots.size()));
    path = (std::filesystem::path(options_.screenshot_dir) / name).string();
  }
  write_png(path, static_cast<int>(screenshot_extent_.width),
            static_cast<int>(screenshot_extent_.height), rgba.data());
  log_info("screenshot: ", path);
  last_screenshot_ = path;
  report_.screenshots.push_back(path);
}

WindowReport WindowPlayer::run() {
  GLFWwindow* window = window_->get();
  Stopwatch frame_clock;
  bool first = true;
  while (!glfwWindowShouldClose(window) &&
         (options_.max_frames <= 0 || report_.frames_rendered < options_.max_frames)) {
    glfwPollEvents();
    for (const InjectedKey& key : options_.injected_keys) {
      if (key.frame == report_.frames_rendered) input_.on_key(key.key, key.action);
    }
    for (const InjectedResize& resize : options_.injected_resizes) {
      if (resize.frame == report_.frames_rendered) {
        const bool restore = resize.width <= 0 || resize.height <= 0;
        glfwSetWindowSize(window, restore ? initial_width_ : resize.width,
                          restore ? initial_height_ : resize.height);
        glfwPollEvents();
      }
    }
    // The newest snapshot; the inference thread may be mid-block: nothing here waits for it.
    const std::shared_ptr<const LiveStats> stats = inference_->stats();
    if (stats) panel_model_.observe(*stats);
    if (options_.script) {
      options_.script->on_frame({report_.frames_rendered, stats.get(), &panel_model_, &input_});
    }
    const PlayerCommands commands = input_.take_commands();
    bool screenshot = dispatch(commands) || panel_requests_.screenshot;
    if (panel_requests_.filter_changed) present_settings_.filter = panel_requests_.filter;
    if (panel_requests_.scale_mode_changed)
      present_settings_.scale_mode = panel_requests_.scale_mode;
    panel_requests_ = {};
    if (commands.quit) {
      glfwSetWindowShouldClose(window, GLFW_TRUE);
      break;
    }

    int width = 0;
    int height = 0;
    glfwGetFramebufferSize(window, &width, &height);
    if (width == 0 || height == 0) {  // minimised: nothing to draw into, keep the swapchain
      glfwWaitEventsTimeout(0.1);
      continue;
    }
    const VkExtent2D extent{static_cast<uint32_t>(width), static_cast<uint32_t>(height)};
    if (resized_ || extent.width != swapchain_->extent().width ||
        extent.height != swapchain_->extent().height) {
      rebuild_swapchain(extent);
    }

    Stopwatch present_clock;
    if (!render_frame(screenshot, stats.get())) continue;
    const double present_ms = present_clock.elapsed_ms();
    inference_->frame_presented();  // a pacing credit: See Note [Frame pacing]
    ++report_.frames_rendered;
    const double ms = frame_clock.elapsed_ms();
    frame_clock.restart();
    if (!first) {
      panel_model_.observe_frame(ms, present_ms);
      all_frame_ms_.push_back(ms);
    }
    first = false;
  }
  vkDeviceWaitIdle(context_->device());
  inference_->stop();
  report_.final_stats = inference_->stats();
  report_.frames_produced = report_.final_stats ? report_.final_stats->frames_produced : 0;
  if (options_.script)
    report_.script_failures = options_.script->failures(report_.final_stats.get());
  report_.frame_ms_p50 = percentile(all_frame_ms_, 50.0);
  report_.frame_ms_p99 = percentile(all_frame_ms_, 99.0);
  report_.validation_errors = context_->validation_errors();
  report_.validation_warnings = context_->validation_warnings();
  return report_;
}

}  // namespace

WindowReport run_window_player(const WindowOptions& options, FrameSource& source,
                               PolicyControl* control) {
  WindowPlayer player(options, source, control);
  return player.run();
}

std::vector<InjectedKey> smoke_test_keys(int frames) {
  std::vector<InjectedKey> keys = {
      {2, GLFW_KEY_D, GLFW_PRESS},
      {10, GLFW_KEY_D, GLFW_RELEASE},
      {11, GLFW_KEY_UP, GLFW_PRESS},
      {16, GLFW_KEY_UP, GLFW_RELEASE},
      {17, GLFW_KEY_P, GLFW_PRESS},
      {17, GLFW_KEY_P, GLFW_RELEASE},
      {19, GLFW_KEY_N, GLFW_PRESS},
      {19, GLFW_KEY_N, GLFW_RELEASE},
      {21, GLFW_KEY_P, GLFW_PRESS},
      {21, GLFW_KEY_P, GLFW_RELEASE},
      {23, GLFW_KEY_R, GLFW_PRESS},
      {23, GLFW_KEY_R, GLFW_RELEASE},
      {24, GLFW_KEY_RIGHT, GLFW_PRESS},
      {frames - 2, GLFW_KEY_RIGHT, GLFW_RELEASE},
      {frames - 3, GLFW_KEY_F12, GLFW_PRESS},
      {frames - 3, GLFW_KEY_F12, GLFW_RELEASE},
      {frames, GLFW_KEY_ESCAPE, GLFW_PRESS},
  };
  return keys;
}

std::vector<InjectedResize> smoke_test_resizes(int frames) {
  return {{frames / 2, 700, 500}, {frames / 2 + 4, 0, 0}};
}

}  // namespace wc::ui
