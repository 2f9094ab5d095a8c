// A timeline semaphore exportable as an opaque POSIX fd, so CUDA (cudaImportExternalSemaphore,
// TimelineSemaphoreFd) can wait for and signal the values Vulkan submissions use (DESIGN.md §9).
#pragma once

#include <vulkan/vulkan.h>

#include <cstdint>
#include <string>

namespace wc::ui::vk {

class Context;

class ExternalTimeline {
 public:
  // Why `context` cannot make one ("" when it can): VK_KHR_external_semaphore_fd not enabled
  // (lavapipe has none; see ContextOptions::external_interop) or opaque-fd export not offered
  // for timeline semaphores.
  static std::string unsupported_reason(const Context& context);

  // Starts at value 0. Throws wc::Error naming the missing capability or failed call.
  explicit ExternalTimeline(const Context& context);
  ~ExternalTimeline();
  ExternalTimeline(const ExternalTimeline&) = delete;
  ExternalTimeline& operator=(const ExternalTimeline&) = delete;

  VkSemaphore handle() const { return semaphore_; }
  // A new fd for the semaphore; the caller owns it (an importer that succeeds takes it over).
  int export_fd() const;
  // The value reached so far, and a host wait for `value` (UINT64_MAX timeout = forever).
  uint64_t value() const;
  void wait(uint64_t value) const;

 private:
  VkDevice device_ = VK_NULL_HANDLE;
  VkSemaphore semaphore_ = VK_NULL_HANDLE;
};

}  // namespace wc::ui::vk
