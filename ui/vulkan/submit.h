// One queue submission with a mix of binary and timeline semaphores (swapchain semaphores are
// binary; frame-sink ordering uses timelines), so every pass submits the same way.
#pragma once

#include <vulkan/vulkan.h>

#include <cstdint>
#include <vector>

namespace wc::ui::vk {

struct SubmitSync {
  std::vector<VkSemaphore> wait_semaphores;
  std::vector<uint64_t> wait_values;  // ignored for binary semaphores
  std::vector<VkPipelineStageFlags> wait_stages;
  std::vector<VkSemaphore> signal_semaphores;
  std::vector<uint64_t> signal_values;  // ignored for binary semaphores

  void wait(VkSemaphore semaphore, VkPipelineStageFlags stage, uint64_t value = 0) {
    wait_semaphores.push_back(semaphore);
    wait_stages.push_back(stage);
    wait_values.push_back(value);
  }
  void signal(VkSemaphore semaphore, uint64_t value = 0) {
    signal_semaphores.push_back(semaphore);
    signal_values.push_back(value);
  }
};

// Submits one command buffer with `sync`; `fence` may be VK_NULL_HANDLE.
void submit(VkQueue queue, VkCommandBuffer cmd, const SubmitSync& sync, VkFence fence);

}  // namespace wc::ui::vk
