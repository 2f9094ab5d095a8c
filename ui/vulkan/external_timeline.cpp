// Exportable timeline semaphores; see external_timeline.h.
#include "ui/vulkan/external_timeline.h"

#include "engine/core/error.h"
#include "ui/vulkan/check.h"
#include "ui/vulkan/context.h"

namespace wc::ui::vk {
namespace {

constexpr VkExternalSemaphoreHandleTypeFlagBits kHandleType =
    VK_EXTERNAL_SEMAPHORE_HANDLE_TYPE_OPAQUE_FD_BIT;

}  // namespace

std::string ExternalTimeline::unsupported_reason(const Context& context) {
  if (!context.has_device_extension(VK_KHR_EXTERNAL_SEMAPHORE_FD_EXTENSION_NAME)) {
    return context.device_name() + " has no VK_KHR_external_semaphore_fd enabled";
  }
  // Timeline export is queried with the semaphore type chained (Vulkan 1.2).
  VkSemaphoreTypeCreateInfo type{};
  type.sType = VK_STRUCTURE_TYPE_SEMAPHORE_TYPE_CREATE_INFO;
  type.semaphoreType = VK_SEMAPHORE_TYPE_TIMELINE;
  VkPhysicalDeviceExternalSemaphoreInfo info{};
  info.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_EXTERNAL_SEMAPHORE_INFO;
  info.pNext = &type;
  info.handleType = kHandleType;
  VkExternalSemaphoreProperties properties{};
  properties.sType = VK_STRUCTURE_TYPE_EXTERNAL_SEMAPHORE_PROPERTIES;
  vkGetPhysicalDeviceExternalSemaphoreProperties(context.physical_device(), &info, &properties);
  if (!(properties.externalSemaphoreFeatures & VK_EXTERNAL_SEMAPHORE_FEATURE_EXPORTABLE_BIT)) {
    return context.device_name() + " cannot export timeline semaphores as an opaque fd";
  }
  return "";
}

ExternalTimeline::ExternalTimeline(const Context& context) : device_(context.device()) {
  const std::string reason = unsupported_reason(context);
  if (!reason.empty()) throw Error("vulkan", reason);
  VkExportSemaphoreCreateInfo export_info{};
  export_info.sType = VK_STRUCTURE_TYPE_EXPORT_SEMAPHORE_CREATE_INFO;
  export_info.handleTypes = kHandleType;
  VkSemaphoreTypeCreateInfo type{};
  type.sType = VK_STRUCTURE_TYPE_SEMAPHORE_TYPE_CREATE_INFO;
  type.pNext = &export_info;
  type.semaphoreType = VK_SEMAPHORE_TYPE_TIMELINE;
  type.initialValue = 0;
  VkSemaphoreCreateInfo info{};
  info.sType = VK_STRUCTURE_TYPE_SEMAPHORE_CREATE_INFO;
  info.pNext = &type;
  check(vkCreateSemaphore(device_, &info, nullptr, &semaphore_), "vkCreateSemaphore(exportable)");
}

ExternalTimeline::~ExternalTimeline() {
  vkDestroySemaphore(device_, semaphore_, nullptr);
}

int ExternalTimeline::export_fd() const {
  const auto get_fd = reinterpret_cast<PFN_vkGetSemaphoreFdKHR>(
      vkGetDeviceProcAddr(device_, "vkGetSemaphoreFdKHR"));
  if (get_fd == nullptr) throw Error("vulkan", "vkGetSemaphoreFdKHR is not available");
  VkSemaphoreGetFdInfoKHR info{};
  info.sType = VK_STRUCTURE_TYPE_SEMAPHORE_GET_FD_INFO_KHR;
  info.semaphore = semaphore_;
  info.handleType = kHandleType;
  int fd = -1;
  check(get_fd(device_, &info, &fd), "vkGetSemaphoreFdKHR");
  return fd;
}

uint64_t ExternalTimeline::value() const {
  uint64_t value = 0;
  check(vkGetSemaphoreCounterValue(device_, semaphore_, &value), "vkGetSemaphoreCounterValue");
  return value;
}

void ExternalTimeline::wait(uint64_t value) const {
  VkSemaphoreWaitInfo wait{};
  wait.sType = VK_STRUCTURE_TYPE_SEMAPHORE_WAIT_INFO;
  wait.semaphoreCount = 1;
  wait.pSemaphores = &semaphore_;
  wait.pValues = &value;
  check(vkWaitSemaphores(device_, &wait, UINT64_MAX), "vkWaitSemaphores");
}

}  // namespace wc::ui::vk
