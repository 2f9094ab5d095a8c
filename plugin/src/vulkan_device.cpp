// See vulkan_device.h. Mirrors ui/vulkan/context.cpp's device choice, minus any surface, plus
// the external memory/semaphore extensions (research/systems.md §1 lists exactly this set).
#include "plugin/src/vulkan_device.h"

#include <algorithm>
#include <cstring>
#include <string>

#include "engine/core/log.h"
#include "plugin/src/plugin_error.h"
#include "plugin/src/vulkan_check.h"

namespace wc::plugin {
namespace {

bool has_extension(VkPhysicalDevice device, const char* name) {
  uint32_t count = 0;
  vkEnumerateDeviceExtensionProperties(device, nullptr, &count, nullptr);
  std::vector<VkExtensionProperties> extensions(count);
  vkEnumerateDeviceExtensionProperties(device, nullptr, &count, extensions.data());
  return std::any_of(extensions.begin(), extensions.end(), [&](const VkExtensionProperties& e) {
    return std::strcmp(e.extensionName, name) == 0;
  });
}

bool timeline_semaphore_exportable(VkPhysicalDevice device) {
  if (!has_extension(device, VK_KHR_EXTERNAL_SEMAPHORE_FD_EXTENSION_NAME)) return false;
  VkSemaphoreTypeCreateInfo type{};
  type.sType = VK_STRUCTURE_TYPE_SEMAPHORE_TYPE_CREATE_INFO;
  type.semaphoreType = VK_SEMAPHORE_TYPE_TIMELINE;
  VkPhysicalDeviceExternalSemaphoreInfo info{};
  info.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_EXTERNAL_SEMAPHORE_INFO;
  info.pNext = &type;
  info.handleType = VK_EXTERNAL_SEMAPHORE_HANDLE_TYPE_OPAQUE_FD_BIT;
  VkExternalSemaphoreProperties properties{};
  properties.sType = VK_STRUCTURE_TYPE_EXTERNAL_SEMAPHORE_PROPERTIES;
  vkGetPhysicalDeviceExternalSemaphoreProperties(device, &info, &properties);
  return (properties.externalSemaphoreFeatures & VK_EXTERNAL_SEMAPHORE_FEATURE_EXPORTABLE_BIT) != 0;
}

std::string uuid_hex(const uint8_t* uuid) {
  static const char* const kDigits = "0123456789abcdef";
  std::string text;
  for (uint32_t i = 0; i < VK_UUID_SIZE; ++i) {
    text += kDigits[uuid[i] >> 4];
    text += kDigits[uuid[i] & 15];
  }
  return text;
}

}  // namespace

VulkanDevice::VulkanDevice(const VulkanDeviceOptions& options) {
  try {
    create_instance(options.validation);
    pick_physical_device(options);
    create_device();
  } catch (...) {
    destroy();
    throw;
  }
}

VulkanDevice::~VulkanDevice() {
  destroy();
}

void VulkanDevice::destroy() {
  if (device_ != VK_NULL_HANDLE) {
    vkDeviceWaitIdle(device_);
    vkDestroyDevice(device_, nullptr);
    device_ = VK_NULL_HANDLE;
  }
  messenger_.reset();  // before its instance
  if (instance_ != VK_NULL_HANDLE) {
    vkDestroyInstance(instance_, nullptr);
    instance_ = VK_NULL_HANDLE;
  }
}

void VulkanDevice::create_instance(bool validation) {
  std::vector<const char*> layers;
  std::vector<const char*> extensions;
  if (validation) {
    if (!ui::vk::validation_layer_available()) {
      throw PluginError(WC_RESULT_ERROR_UNSUPPORTED,
                        std::string("Vulkan validation requested but ") + ui::vk::kValidationLayer +
                            " is not installed (Debian: vulkan-validationlayers)");
    }
    layers.push_back(ui::vk::kValidationLayer);
    extensions.push_back(VK_EXT_DEBUG_UTILS_EXTENSION_NAME);
  }
  VkApplicationInfo app{};
  app.sType = VK_STRUCTURE_TYPE_APPLICATION_INFO;
  app.pApplicationName = "worldcast plugin";
  app.pEngineName = "worldcast";
  app.apiVersion = VK_API_VERSION_1_2;
  // Chained as well, so instance creation is covered: see Note [Real messenger].
  const VkDebugUtilsMessengerCreateInfoEXT chained = ui::vk::messenger_create_info(&counters_);
  VkInstanceCreateInfo info{};
  info.sType = VK_STRUCTURE_TYPE_INSTANCE_CREATE_INFO;
  info.pNext = validation ? &chained : nullptr;
  info.pApplicationInfo = &app;
  info.enabledLayerCount = static_cast<uint32_t>(layers.size());
  info.ppEnabledLayerNames = layers.data();
  info.enabledExtensionCount = static_cast<uint32_t>(extensions.size());
  info.ppEnabledExtensionNames = extensions.data();
  vk_check(vkCreateInstance(&info, nullptr, &instance_), "vkCreateInstance");
  if (validation) messenger_ = std::make_unique<ui::vk::ValidationMessenger>(instance_, &counters_);
}

void VulkanDevice::pick_physical_device(const VulkanDeviceOptions& options) {
  uint32_t count = 0;
  vk_check(vkEnumeratePhysicalDevices(instance_, &count, nullptr), "vkEnumeratePhysicalDevices");
  std::vector<VkPhysicalDevice> devices(count);
  vk_check(vkEnumeratePhysicalDevices(instance_, &count, devices.data()),
           "vkEnumeratePhysicalDevices");
  std::string rejected;
  for (VkPhysicalDevice device : devices) {
    VkPhysicalDeviceIDProperties id{};
    id.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_ID_PROPERTIES;
    VkPhysicalDeviceProperties2 properties{};
    properties.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PROPERTIES_2;
    properties.pNext = &id;
    vkGetPhysicalDeviceProperties2(device, &properties);
    const VkPhysicalDeviceProperties& p = properties.properties;
    const auto reject = [&](const std::string& why) {
      rejected += std::string(" ") + p.deviceName + " (" + why + ");";
    };
    if (options.device_uuid &&
        std::memcmp(id.deviceUUID, options.device_uuid->data(), VK_UUID_SIZE) != 0) {
      reject("deviceUUID " + uuid_hex(id.deviceUUID) + " does not match");
      continue;
    }
    if (p.apiVersion < VK_API_VERSION_1_2) {
      reject("Vulkan < 1.2");
      continue;
    }
    VkPhysicalDeviceVulkan12Features features12{};
    features12.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_2_FEATURES;
    VkPhysicalDeviceFeatures2 features{};
    features.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2;
    features.pNext = &features12;
    vkGetPhysicalDeviceFeatures2(device, &features);
    if (!features12.timelineSemaphore) {
      reject("no timeline semaphores");
      continue;
    }
    if (!has_extension(device, VK_KHR_EXTERNAL_MEMORY_FD_EXTENSION_NAME)) {
      reject("no VK_KHR_external_memory_fd");
      continue;
    }
    uint32_t family_count = 0;
    vkGetPhysicalDeviceQueueFamilyProperties(device, &family_count, nullptr);
    std::vector<VkQueueFamilyProperties> families(family_count);
    vkGetPhysicalDeviceQueueFamilyProperties(device, &family_count, families.data());
    std::optional<uint32_t> family;
    // Graphics and compute queues can always copy; prefer them over transfer-only families
    // so the staging copy runs on a queue every driver schedules promptly.
    for (uint32_t i = 0; i < family_count && !family; ++i) {
      if (families[i].queueFlags & (VK_QUEUE_GRAPHICS_BIT | VK_QUEUE_COMPUTE_BIT)) family = i;
    }
    if (!family) {
      reject("no graphics or compute queue");
      continue;
    }
    physical_device_ = device;
    queue_family_ = *family;
    std::memcpy(device_uuid_.data(), id.deviceUUID, VK_UUID_SIZE);
    std::memcpy(driver_uuid_.data(), id.driverUUID, VK_UUID_SIZE);
    semaphore_export_ = timeline_semaphore_exportable(device);
    log_info("plugin vulkan: ", p.deviceName,
             semaphore_export_ ? " (memory and timeline semaphore export)"
                               : " (memory export; no exportable timeline "
                                 "semaphore: frames are host-synchronous)");
    return;
  }
  throw PluginError(WC_RESULT_ERROR_UNSUPPORTED,
                    "no Vulkan device can export frames:" +
                        (rejected.empty() ? std::string(" no physical device") : rejected));
}

void VulkanDevice::create_device() {
  const float priority = 1.0f;
  VkDeviceQueueCreateInfo queue_info{};
  queue_info.sType = VK_STRUCTURE_TYPE_DEVICE_QUEUE_CREATE_INFO;
  queue_info.queueFamilyIndex = queue_family_;
  queue_info.queueCount = 1;
  queue_info.pQueuePriorities = &priority;

  VkPhysicalDeviceVulkan12Features features12{};
  features12.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_2_FEATURES;
  features12.timelineSemaphore = VK_TRUE;
  VkPhysicalDeviceFeatures2 features{};
  features.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2;
  features.pNext = &features12;

  // External memory/semaphore and timeline semaphores are core in 1.2; only the fd handle
  // types are extensions. The host needs the same ones to import.
  host_extensions_ = {VK_KHR_EXTERNAL_MEMORY_FD_EXTENSION_NAME};
  if (semaphore_export_) host_extensions_.push_back(VK_KHR_EXTERNAL_SEMAPHORE_FD_EXTENSION_NAME);

  VkDeviceCreateInfo info{};
  info.sType = VK_STRUCTURE_TYPE_DEVICE_CREATE_INFO;
  info.pNext = &features;
  info.queueCreateInfoCount = 1;
  info.pQueueCreateInfos = &queue_info;
  info.enabledExtensionCount = static_cast<uint32_t>(host_extensions_.size());
  info.ppEnabledExtensionNames = host_extensions_.data();
  vk_check(vkCreateDevice(physical_device_, &info, nullptr, &device_), "vkCreateDevice");
  vkGetDeviceQueue(device_, queue_family_, 0, &queue_);

  get_memory_fd =
      reinterpret_cast<PFN_vkGetMemoryFdKHR>(vkGetDeviceProcAddr(device_, "vkGetMemoryFdKHR"));
  if (!get_memory_fd) {
    throw PluginError(WC_RESULT_ERROR_UNSUPPORTED, "vkGetMemoryFdKHR is not available");
  }
  if (semaphore_export_) {
    get_semaphore_fd = reinterpret_cast<PFN_vkGetSemaphoreFdKHR>(
        vkGetDeviceProcAddr(device_, "vkGetSemaphoreFdKHR"));
    if (!get_semaphore_fd) semaphore_export_ = false;
  }
}

std::optional<uint32_t> VulkanDevice::find_memory_type(uint32_t type_bits,
                                                       VkMemoryPropertyFlags flags) const {
  VkPhysicalDeviceMemoryProperties memory{};
  vkGetPhysicalDeviceMemoryProperties(physical_device_, &memory);
  for (uint32_t i = 0; i < memory.memoryTypeCount; ++i) {
    if ((type_bits & (1u << i)) && (memory.memoryTypes[i].propertyFlags & flags) == flags) return i;
  }
  return std::nullopt;
}

}  // namespace wc::plugin
