// Queue submission with VkTimelineSemaphoreSubmitInfo always chained (values of binary
// semaphores are ignored by the spec, so one code path serves both kinds).
#include "ui/vulkan/submit.h"

#include "ui/vulkan/check.h"

namespace wc::ui::vk {

void submit(VkQueue queue, VkCommandBuffer cmd, const SubmitSync& sync, VkFence fence) {
  VkTimelineSemaphoreSubmitInfo timeline{};
  timeline.sType = VK_STRUCTURE_TYPE_TIMELINE_SEMAPHORE_SUBMIT_INFO;
  timeline.waitSemaphoreValueCount = static_cast<uint32_t>(sync.wait_values.size());
  timeline.pWaitSemaphoreValues = sync.wait_values.data();
  timeline.signalSemaphoreValueCount = static_cast<uint32_t>(sync.signal_values.size());
  timeline.pSignalSemaphoreValues = sync.signal_values.data();

  VkSubmitInfo info{};
  info.sType = VK_STRUCTURE_TYPE_SUBMIT_INFO;
  info.pNext = &timeline;
  info.waitSemaphoreCount = static_cast<uint32_t>(sync.wait_semaphores.size());
  info.pWaitSemaphores = sync.wait_semaphores.data();
  info.pWaitDstStageMask = sync.wait_stages.data();
  info.commandBufferCount = 1;
  info.pCommandBuffers = &cmd;
  info.signalSemaphoreCount = static_cast<uint32_t>(sync.signal_semaphores.size());
  info.pSignalSemaphores = sync.signal_semaphores.data();
  check(vkQueueSubmit(queue, 1, &info, fence), "vkQueueSubmit");
}

}  // namespace wc::ui::vk
