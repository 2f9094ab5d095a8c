// The CPU frame path: memcpy into a host-visible slot, copy the newest slot into the sampled
// image on the render thread. See Note [Slot ownership] in cpu_frame_sink.h.
#include "ui/frames/cpu_frame_sink.h"

#include <cstring>

#include "engine/core/error.h"
#include "ui/vulkan/check.h"
#include "ui/vulkan/context.h"

namespace wc::ui {

CpuFrameSink::CpuFrameSink(vk::Context& context, int width, int height)
    : context_(context), width_(width), height_(height) {
  if (width <= 0 || height <= 0) throw Error("CpuFrameSink", "frame size must be positive");
  const VkDeviceSize bytes = static_cast<VkDeviceSize>(width) * height * 4;
  for (Slot& slot : slots_) {
    slot.staging = std::make_unique<vk::Buffer>(context, bytes, VK_BUFFER_USAGE_TRANSFER_SRC_BIT,
                                                vk::kHostMemory);
  }
  image_ = std::make_unique<vk::Image>(
      context, static_cast<uint32_t>(width), static_cast<uint32_t>(height),
      VK_FORMAT_R8G8B8A8_UNORM, VK_IMAGE_USAGE_SAMPLED_BIT | VK_IMAGE_USAGE_TRANSFER_DST_BIT);

  VkSemaphoreTypeCreateInfo type{};
  type.sType = VK_STRUCTURE_TYPE_SEMAPHORE_TYPE_CREATE_INFO;
  type.semaphoreType = VK_SEMAPHORE_TYPE_TIMELINE;
  type.initialValue = 0;
  VkSemaphoreCreateInfo info{};
  info.sType = VK_STRUCTURE_TYPE_SEMAPHORE_CREATE_INFO;
  info.pNext = &type;
  vk::check(vkCreateSemaphore(context.device(), &info, nullptr, &copies_done_),
            "vkCreateSemaphore(timeline)");

  // Until the first frame arrives the present pass samples black, never undefined memory.
  context.submit_and_wait([&](VkCommandBuffer cmd) {
    vk::record_transition(cmd, image_->handle(),
                          {VK_IMAGE_LAYOUT_UNDEFINED, VK_IMAGE_LAYOUT_TRANSFER_DST_OPTIMAL,
                           VK_PIPELINE_STAGE_TOP_OF_PIPE_BIT, 0, VK_PIPELINE_STAGE_TRANSFER_BIT,
                           VK_ACCESS_TRANSFER_WRITE_BIT});
    const VkClearColorValue black{{0.0f, 0.0f, 0.0f, 1.0f}};
    const VkImageSubresourceRange range{VK_IMAGE_ASPECT_COLOR_BIT, 0, 1, 0, 1};
    vkCmdClearColorImage(cmd, image_->handle(), VK_IMAGE_LAYOUT_TRANSFER_DST_OPTIMAL, &black, 1,
                         &range);
    vk::record_transition(
        cmd, image_->handle(),
        {VK_IMAGE_LAYOUT_TRANSFER_DST_OPTIMAL, VK_IMAGE_LAYOUT_SHADER_READ_ONLY_OPTIMAL,
         VK_PIPELINE_STAGE_TRANSFER_BIT, VK_ACCESS_TRANSFER_WRITE_BIT,
         VK_PIPELINE_STAGE_FRAGMENT_SHADER_BIT, VK_ACCESS_SHADER_READ_BIT});
  });
}

CpuFrameSink::~CpuFrameSink() {
  vkDeviceWaitIdle(context_.device());
  vkDestroySemaphore(context_.device(), copies_done_, nullptr);
}

void CpuFrameSink::publish(const uint8_t* rgba, uint64_t frame_index) {
  int target = -1;
  uint64_t release = 0;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    // With one producer, at most one slot is newest, so two candidates always remain; take the
    // one the GPU released longest ago.
    for (int i = 0; i < kFrameSlots; ++i) {
      if (i == newest_ || slots_[i].writing) continue;
      if (target < 0 || slots_[i].gpu_release < slots_[target].gpu_release) target = i;
    }
    if (target < 0) throw Error("CpuFrameSink", "publish called from more than one thread");
    slots_[target].writing = true;
    release = slots_[target].gpu_release;
  }
  if (release > 0) {
    VkSemaphoreWaitInfo wait{};
    wait.sType = VK_STRUCTURE_TYPE_SEMAPHORE_WAIT_INFO;
    wait.semaphoreCount = 1;
    wait.pSemaphores = &copies_done_;
    wait.pValues = &release;
    vk::check(vkWaitSemaphores(context_.device(), &wait, UINT64_MAX), "vkWaitSemaphores");
  }
  Slot& slot = slots_[target];
  std::memcpy(slot.staging->mapped(), rgba, static_cast<size_t>(slot.staging->size()));
  std::lock_guard<std::mutex> lock(mutex_);
  slot.writing = false;
  slot.frame_index = frame_index;
  slot.sequence = ++published_;
  newest_ = target;
}

bool CpuFrameSink::record_upload(VkCommandBuffer cmd, vk::SubmitSync* sync) {
  VkBuffer source = VK_NULL_HANDLE;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (newest_ < 0 || slots_[newest_].sequence == shown_sequence_) return false;
    Slot& slot = slots_[newest_];
    slot.gpu_release = ++uploads_recorded_;
    shown_sequence_ = slot.sequence;
    shown_frame_ = slot.frame_index;
    source = slot.staging->handle();
  }
  // The previous present pass may still sample the image: wait for its fragment stage (WAR).
  vk::record_transition(
      cmd, image_->handle(),
      {VK_IMAGE_LAYOUT_SHADER_READ_ONLY_OPTIMAL, VK_IMAGE_LAYOUT_TRANSFER_DST_OPTIMAL,
       VK_PIPELINE_STAGE_FRAGMENT_SHADER_BIT, 0, VK_PIPELINE_STAGE_TRANSFER_BIT,
       VK_ACCESS_TRANSFER_WRITE_BIT});
  const VkBufferImageCopy region =
      vk::whole_image_copy(static_cast<uint32_t>(width_), static_cast<uint32_t>(height_));
  vkCmdCopyBufferToImage(cmd, source, image_->handle(), VK_IMAGE_LAYOUT_TRANSFER_DST_OPTIMAL, 1,
                         &region);
  vk::record_transition(
      cmd, image_->handle(),
      {VK_IMAGE_LAYOUT_TRANSFER_DST_OPTIMAL, VK_IMAGE_LAYOUT_SHADER_READ_ONLY_OPTIMAL,
       VK_PIPELINE_STAGE_TRANSFER_BIT, VK_ACCESS_TRANSFER_WRITE_BIT,
       VK_PIPELINE_STAGE_FRAGMENT_SHADER_BIT, VK_ACCESS_SHADER_READ_BIT});
  sync->signal(copies_done_, uploads_recorded_);
  return true;
}

uint64_t CpuFrameSink::shown_frame_index() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return shown_frame_;
}

}  // namespace wc::ui
