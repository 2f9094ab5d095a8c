// Instance, messenger, device and queue creation; see context.h.
#include "ui/vulkan/context.h"

#include <algorithm>
#include <cstring>

#include "engine/core/error.h"
#include "engine/core/log.h"
#include "ui/vulkan/check.h"

namespace wc::ui::vk {
namespace {

int device_type_rank(VkPhysicalDeviceType type) {
  switch (type) {
    case VK_PHYSICAL_DEVICE_TYPE_DISCRETE_GPU:
      return 0;
    case VK_PHYSICAL_DEVICE_TYPE_INTEGRATED_GPU:
      return 1;
    case VK_PHYSICAL_DEVICE_TYPE_VIRTUAL_GPU:
      return 2;
    case VK_PHYSICAL_DEVICE_TYPE_CPU:
      return 3;
    default:
      return 4;
  }
}

bool device_supports_extension(VkPhysicalDevice device, const char* name) {
  uint32_t count = 0;
  vkEnumerateDeviceExtensionProperties(device, nullptr, &count, nullptr);
  std::vector<VkExtensionProperties> extensions(count);
  vkEnumerateDeviceExtensionProperties(device, nullptr, &count, extensions.data());
  return std::any_of(extensions.begin(), extensions.end(), [&](const VkExtensionProperties& e) {
    return std::strcmp(e.extensionName, name) == 0;
  });
}

}  // namespace

Context::Context(const ContextOptions& options) {
  try {
    create_instance(options);
    if (options.make_surface) surface_ = options.make_surface(instance_);
    pick_physical_device(options);
    create_device();
  } catch (...) {
    destroy();
    throw;
  }
}

Context::~Context() {
  destroy();
}

void Context::destroy() {
  if (device_ != VK_NULL_HANDLE) {
    vkDeviceWaitIdle(device_);
    if (setup_pool_ != VK_NULL_HANDLE) vkDestroyCommandPool(device_, setup_pool_, nullptr);
    vkDestroyDevice(device_, nullptr);
    device_ = VK_NULL_HANDLE;
  }
  if (surface_ != VK_NULL_HANDLE) {
    vkDestroySurfaceKHR(instance_, surface_, nullptr);
    surface_ = VK_NULL_HANDLE;
  }
  messenger_.reset();  // before the instance it belongs to
  if (instance_ != VK_NULL_HANDLE) {
    vkDestroyInstance(instance_, nullptr);
    instance_ = VK_NULL_HANDLE;
  }
}

void Context::create_instance(const ContextOptions& options) {
  std::vector<const char*> extensions;
  for (const auto& name : options.instance_extensions) extensions.push_back(name.c_str());
  std::vector<const char*> layers;
  if (options.validation) {
    if (!validation_layer_available()) {
      throw Error("vulkan", std::string("validation requested but ") + kValidationLayer +
                                " is not installed (Debian: vulkan-validationlayers)");
    }
    layers.push_back(kValidationLayer);
    extensions.push_back(VK_EXT_DEBUG_UTILS_EXTENSION_NAME);
    validation_enabled_ = true;
  }

  VkApplicationInfo app{};
  app.sType = VK_STRUCTURE_TYPE_APPLICATION_INFO;
  app.pApplicationName = "worldcast";
  app.pEngineName = "worldcast";
  app.apiVersion = VK_API_VERSION_1_2;

  // Chained too, so vkCreateInstance/vkDestroyInstance are covered; see Note [Real messenger].
  const VkDebugUtilsMessengerCreateInfoEXT chained = messenger_create_info(counters_.get());
  VkInstanceCreateInfo info{};
  info.sType = VK_STRUCTURE_TYPE_INSTANCE_CREATE_INFO;
  info.pNext = validation_enabled_ ? &chained : nullptr;
  info.pApplicationInfo = &app;
  info.enabledLayerCount = static_cast<uint32_t>(layers.size());
  info.ppEnabledLayerNames = layers.data();
  info.enabledExtensionCount = static_cast<uint32_t>(extensions.size());
  info.ppEnabledExtensionNames = extensions.data();
  check(vkCreateInstance(&info, nullptr, &instance_), "vkCreateInstance");
  if (validation_enabled_) {
    messenger_ = std::make_unique<ValidationMessenger>(instance_, counters_.get());
  }
}

void Context::pick_physical_device(const ContextOptions& options) {
  uint32_t count = 0;
  vkEnumeratePhysicalDevices(instance_, &count, nullptr);
  std::vector<VkPhysicalDevice> devices(count);
  vkEnumeratePhysicalDevices(instance_, &count, devices.data());

  struct Candidate {
    VkPhysicalDevice device;
    uint32_t queue_family;
    int rank;
    VkPhysicalDeviceProperties properties;
    DeviceUuid uuid;
  };
  std::vector<Candidate> candidates;
  std::string rejected;
  for (VkPhysicalDevice device : devices) {
    VkPhysicalDeviceIDProperties id{};
    id.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_ID_PROPERTIES;
    VkPhysicalDeviceProperties2 properties{};
    properties.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PROPERTIES_2;
    properties.pNext = &id;
    vkGetPhysicalDeviceProperties2(device, &properties);
    const VkPhysicalDeviceProperties& p = properties.properties;
    auto reject = [&](const char* why) {
      rejected += std::string(" ") + p.deviceName + " (" + why + ");";
    };

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
    if (surface_ != VK_NULL_HANDLE &&
        !device_supports_extension(device, VK_KHR_SWAPCHAIN_EXTENSION_NAME)) {
      reject("no VK_KHR_swapchain");
      continue;
    }

    uint32_t family_count = 0;
    vkGetPhysicalDeviceQueueFamilyProperties(device, &family_count, nullptr);
    std::vector<VkQueueFamilyProperties> families(family_count);
    vkGetPhysicalDeviceQueueFamilyProperties(device, &family_count, families.data());
    std::optional<uint32_t> chosen;
    for (uint32_t i = 0; i < family_count && !chosen; ++i) {
      if (!(families[i].queueFlags & VK_QUEUE_GRAPHICS_BIT)) continue;
      if (surface_ != VK_NULL_HANDLE) {
        VkBool32 present = VK_FALSE;
        vkGetPhysicalDeviceSurfaceSupportKHR(device, i, surface_, &present);
        if (!present) continue;
      }
      chosen = i;
    }
    if (!chosen) {
      reject("no graphics queue that can present");
      continue;
    }
    DeviceUuid uuid{};
    std::memcpy(uuid.data(), id.deviceUUID, VK_UUID_SIZE);
    // The requested device ranks before every other kind.
    const int rank =
        options.device_uuid && uuid == *options.device_uuid ? -1 : device_type_rank(p.deviceType);
    candidates.push_back({device, *chosen, rank, p, uuid});
  }
  if (candidates.empty()) throw Error("vulkan", "no usable physical device:" + rejected);
  std::stable_sort(candidates.begin(), candidates.end(),
                   [](const Candidate& a, const Candidate& b) { return a.rank < b.rank; });
  const Candidate& best = candidates.front();
  physical_device_ = best.device;
  queue_family_ = best.queue_family;
  device_name_ = best.properties.deviceName;
  api_version_ = best.properties.apiVersion;
  device_uuid_ = best.uuid;
  external_interop_ = options.external_interop;
  log_info("vulkan: ", device_name_, " (Vulkan ", VK_API_VERSION_MAJOR(api_version_), ".",
           VK_API_VERSION_MINOR(api_version_), ".", VK_API_VERSION_PATCH(api_version_),
           validation_enabled_ ? ", validation on)" : ")");
}

void Context::create_device() {
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

  if (surface_ != VK_NULL_HANDLE) device_extensions_.push_back(VK_KHR_SWAPCHAIN_EXTENSION_NAME);
  if (external_interop_) {
    for (const char* name :
         {VK_KHR_EXTERNAL_MEMORY_FD_EXTENSION_NAME, VK_KHR_EXTERNAL_SEMAPHORE_FD_EXTENSION_NAME}) {
      if (device_supports_extension(physical_device_, name)) device_extensions_.push_back(name);
    }
  }
  std::vector<const char*> extensions;
  for (const std::string& name : device_extensions_) extensions.push_back(name.c_str());

  VkDeviceCreateInfo info{};
  info.sType = VK_STRUCTURE_TYPE_DEVICE_CREATE_INFO;
  info.pNext = &features;
  info.queueCreateInfoCount = 1;
  info.pQueueCreateInfos = &queue_info;
  info.enabledExtensionCount = static_cast<uint32_t>(extensions.size());
  info.ppEnabledExtensionNames = extensions.data();
  check(vkCreateDevice(physical_device_, &info, nullptr, &device_), "vkCreateDevice");
  vkGetDeviceQueue(device_, queue_family_, 0, &queue_);

  VkCommandPoolCreateInfo pool{};
  pool.sType = VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO;
  pool.flags = VK_COMMAND_POOL_CREATE_TRANSIENT_BIT;
  pool.queueFamilyIndex = queue_family_;
  check(vkCreateCommandPool(device_, &pool, nullptr, &setup_pool_), "vkCreateCommandPool");
}

bool Context::has_device_extension(const std::string& name) const {
  return std::find(device_extensions_.begin(), device_extensions_.end(), name) !=
         device_extensions_.end();
}

uint32_t Context::find_memory_type(uint32_t type_bits, VkMemoryPropertyFlags flags) const {
  VkPhysicalDeviceMemoryProperties memory{};
  vkGetPhysicalDeviceMemoryProperties(physical_device_, &memory);
  for (uint32_t i = 0; i < memory.memoryTypeCount; ++i) {
    if ((type_bits & (1u << i)) && (memory.memoryTypes[i].propertyFlags & flags) == flags) return i;
  }
  throw Error("vulkan", "no memory type with the requested properties");
}

void Context::submit_and_wait(const std::function<void(VkCommandBuffer)>& record) {
  VkCommandBufferAllocateInfo alloc{};
  alloc.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO;
  alloc.commandPool = setup_pool_;
  alloc.level = VK_COMMAND_BUFFER_LEVEL_PRIMARY;
  alloc.commandBufferCount = 1;
  VkCommandBuffer cmd = VK_NULL_HANDLE;
  check(vkAllocateCommandBuffers(device_, &alloc, &cmd), "vkAllocateCommandBuffers");
  VkFence fence = VK_NULL_HANDLE;
  try {
    VkCommandBufferBeginInfo begin{};
    begin.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO;
    begin.flags = VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT;
    check(vkBeginCommandBuffer(cmd, &begin), "vkBeginCommandBuffer");
    record(cmd);
    check(vkEndCommandBuffer(cmd), "vkEndCommandBuffer");
    VkFenceCreateInfo fence_info{};
    fence_info.sType = VK_STRUCTURE_TYPE_FENCE_CREATE_INFO;
    check(vkCreateFence(device_, &fence_info, nullptr, &fence), "vkCreateFence");
    VkSubmitInfo submit{};
    submit.sType = VK_STRUCTURE_TYPE_SUBMIT_INFO;
    submit.commandBufferCount = 1;
    submit.pCommandBuffers = &cmd;
    check(vkQueueSubmit(queue_, 1, &submit, fence), "vkQueueSubmit");
    check(vkWaitForFences(device_, 1, &fence, VK_TRUE, UINT64_MAX), "vkWaitForFences");
  } catch (...) {
    if (fence != VK_NULL_HANDLE) vkDestroyFence(device_, fence, nullptr);
    vkFreeCommandBuffers(device_, setup_pool_, 1, &cmd);
    throw;
  }
  vkDestroyFence(device_, fence, nullptr);
  vkFreeCommandBuffers(device_, setup_pool_, 1, &cmd);
}

}  // namespace wc::ui::vk
