/* See vulkan_import.h. */
#define _POSIX_C_SOURCE 200809L
#include "vulkan_import.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <vulkan/vulkan.h>

struct vulkan_host {
  VkInstance instance;
  VkDebugUtilsMessengerEXT messenger;
  uint64_t validation_errors;
  VkPhysicalDevice physical_device;
  uint8_t device_uuid[VK_UUID_SIZE];
  uint8_t driver_uuid[VK_UUID_SIZE];
  uint32_t queue_family;
  VkDevice device;
  VkQueue queue;
  /* the imported ring */
  VkBuffer ring;
  VkDeviceMemory ring_memory;
  VkSemaphore timeline; /* VK_NULL_HANDLE when the plugin's frames are host-synchronous */
  /* the host's own image of the frame, and a readback buffer for the PNGs */
  int width, height;
  VkImage image;
  VkDeviceMemory image_memory;
  VkBuffer readback;
  VkDeviceMemory readback_memory;
  void* readback_mapped;
  VkCommandPool pool;
  VkCommandBuffer cmd;
  VkFence fence;
};

#define VK_TRY(call)                                                      \
  do {                                                                    \
    VkResult vk_try_result = (call);                                      \
    if (vk_try_result != VK_SUCCESS) {                                    \
      fprintf(stderr, "vulkan host: %s failed (%d)\n", #call, (int)vk_try_result); \
      return -1;                                                          \
    }                                                                     \
  } while (0)

static VKAPI_ATTR VkBool32 VKAPI_CALL on_validation(
    VkDebugUtilsMessageSeverityFlagBitsEXT severity, VkDebugUtilsMessageTypeFlagsEXT types,
    const VkDebugUtilsMessengerCallbackDataEXT* data, void* user_data) {
  vulkan_host* host = (vulkan_host*)user_data;
  (void)types;
  if (severity & VK_DEBUG_UTILS_MESSAGE_SEVERITY_ERROR_BIT_EXT) {
    ++host->validation_errors;
    fprintf(stderr, "vulkan host validation error: %s\n", data->pMessage);
  }
  return VK_FALSE;
}

static int find_memory_type(const vulkan_host* host, uint32_t bits, VkMemoryPropertyFlags flags,
                            uint32_t* index) {
  VkPhysicalDeviceMemoryProperties memory;
  uint32_t i;
  vkGetPhysicalDeviceMemoryProperties(host->physical_device, &memory);
  for (i = 0; i < memory.memoryTypeCount; ++i) {
    if ((bits & (1u << i)) && (memory.memoryTypes[i].propertyFlags & flags) == flags) {
      *index = i;
      return 0;
    }
  }
  fprintf(stderr, "vulkan host: no memory type with flags 0x%x\n", (unsigned)flags);
  return -1;
}

vulkan_host* vulkan_host_create(int validate, uint8_t device_uuid[16]) {
  vulkan_host* host = (vulkan_host*)calloc(1, sizeof(vulkan_host));
  VkApplicationInfo app;
  VkInstanceCreateInfo info;
  VkDebugUtilsMessengerCreateInfoEXT messenger;
  const char* layer = "VK_LAYER_KHRONOS_validation";
  const char* extension = VK_EXT_DEBUG_UTILS_EXTENSION_NAME;
  uint32_t count = 0, i;
  VkPhysicalDevice* devices;
  if (!host) return NULL;
  memset(&app, 0, sizeof app);
  app.sType = VK_STRUCTURE_TYPE_APPLICATION_INFO;
  app.pApplicationName = "worldcast example host";
  app.apiVersion = VK_API_VERSION_1_2;
  memset(&messenger, 0, sizeof messenger);
  messenger.sType = VK_STRUCTURE_TYPE_DEBUG_UTILS_MESSENGER_CREATE_INFO_EXT;
  messenger.messageSeverity = VK_DEBUG_UTILS_MESSAGE_SEVERITY_WARNING_BIT_EXT |
                              VK_DEBUG_UTILS_MESSAGE_SEVERITY_ERROR_BIT_EXT;
  messenger.messageType = VK_DEBUG_UTILS_MESSAGE_TYPE_GENERAL_BIT_EXT |
                          VK_DEBUG_UTILS_MESSAGE_TYPE_VALIDATION_BIT_EXT;
  messenger.pfnUserCallback = on_validation;
  messenger.pUserData = host;
  memset(&info, 0, sizeof info);
  info.sType = VK_STRUCTURE_TYPE_INSTANCE_CREATE_INFO;
  info.pNext = validate ? &messenger : NULL;
  info.pApplicationInfo = &app;
  info.enabledLayerCount = validate ? 1 : 0;
  info.ppEnabledLayerNames = &layer;
  info.enabledExtensionCount = validate ? 1 : 0;
  info.ppEnabledExtensionNames = &extension;
  if (vkCreateInstance(&info, NULL, &host->instance) != VK_SUCCESS) {
    fprintf(stderr, "vulkan host: vkCreateInstance failed%s\n",
            validate ? " (is VK_LAYER_KHRONOS_validation installed?)" : "");
    free(host);
    return NULL;
  }
  if (validate) {
    PFN_vkCreateDebugUtilsMessengerEXT create = (PFN_vkCreateDebugUtilsMessengerEXT)
        vkGetInstanceProcAddr(host->instance, "vkCreateDebugUtilsMessengerEXT");
    if (!create || create(host->instance, &messenger, NULL, &host->messenger) != VK_SUCCESS) {
      fprintf(stderr, "vulkan host: cannot create the debug messenger\n");
      vulkan_host_destroy(host);
      return NULL;
    }
  }
  vkEnumeratePhysicalDevices(host->instance, &count, NULL);
  devices = (VkPhysicalDevice*)calloc(count ? count : 1, sizeof(VkPhysicalDevice));
  vkEnumeratePhysicalDevices(host->instance, &count, devices);
  /* An engine picks its GPU by its own rules; the first Vulkan 1.2 device will do here. */
  for (i = 0; i < count && !host->physical_device; ++i) {
    VkPhysicalDeviceIDProperties id;
    VkPhysicalDeviceProperties2 properties;
    memset(&id, 0, sizeof id);
    id.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_ID_PROPERTIES;
    memset(&properties, 0, sizeof properties);
    properties.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PROPERTIES_2;
    properties.pNext = &id;
    vkGetPhysicalDeviceProperties2(devices[i], &properties);
    if (properties.properties.apiVersion < VK_API_VERSION_1_2) continue;
    host->physical_device = devices[i];
    memcpy(host->device_uuid, id.deviceUUID, VK_UUID_SIZE);
    memcpy(host->driver_uuid, id.driverUUID, VK_UUID_SIZE);
  }
  free(devices);
  if (!host->physical_device) {
    fprintf(stderr, "vulkan host: no Vulkan 1.2 device\n");
    vulkan_host_destroy(host);
    return NULL;
  }
  memcpy(device_uuid, host->device_uuid, VK_UUID_SIZE);
  return host;
}

int vulkan_host_create_device(vulkan_host* host, wc_runtime runtime) {
  const char* names[16];
  uint32_t count = 0, family_count = 0, i;
  VkQueueFamilyProperties families[16];
  float priority = 1.0f;
  VkDeviceQueueCreateInfo queue;
  VkPhysicalDeviceVulkan12Features features12;
  VkPhysicalDeviceFeatures2 features;
  VkDeviceCreateInfo info;
  VkCommandPoolCreateInfo pool;
  VkCommandBufferAllocateInfo alloc;
  VkFenceCreateInfo fence;
  wc_result result = wc_runtime_vulkan_device_extensions(runtime, names, 16, &count);
  if (result != WC_RESULT_OK) {
    fprintf(stderr, "wc_runtime_vulkan_device_extensions: %s\n", wc_result_string(result));
    return -1;
  }
  vkGetPhysicalDeviceQueueFamilyProperties(host->physical_device, &family_count, NULL);
  if (family_count > 16) family_count = 16;
  vkGetPhysicalDeviceQueueFamilyProperties(host->physical_device, &family_count, families);
  host->queue_family = UINT32_MAX;
  for (i = 0; i < family_count && host->queue_family == UINT32_MAX; ++i) {
    if (families[i].queueFlags & VK_QUEUE_GRAPHICS_BIT) host->queue_family = i;
  }
  if (host->queue_family == UINT32_MAX) {
    fprintf(stderr, "vulkan host: no graphics queue\n");
    return -1;
  }
  memset(&queue, 0, sizeof queue);
  queue.sType = VK_STRUCTURE_TYPE_DEVICE_QUEUE_CREATE_INFO;
  queue.queueFamilyIndex = host->queue_family;
  queue.queueCount = 1;
  queue.pQueuePriorities = &priority;
  memset(&features12, 0, sizeof features12);
  features12.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_2_FEATURES;
  features12.timelineSemaphore = VK_TRUE;
  memset(&features, 0, sizeof features);
  features.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2;
  features.pNext = &features12;
  memset(&info, 0, sizeof info);
  info.sType = VK_STRUCTURE_TYPE_DEVICE_CREATE_INFO;
  info.pNext = &features;
  info.queueCreateInfoCount = 1;
  info.pQueueCreateInfos = &queue;
  info.enabledExtensionCount = count;
  info.ppEnabledExtensionNames = names;
  VK_TRY(vkCreateDevice(host->physical_device, &info, NULL, &host->device));
  vkGetDeviceQueue(host->device, host->queue_family, 0, &host->queue);

  memset(&pool, 0, sizeof pool);
  pool.sType = VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO;
  pool.flags = VK_COMMAND_POOL_CREATE_RESET_COMMAND_BUFFER_BIT;
  pool.queueFamilyIndex = host->queue_family;
  VK_TRY(vkCreateCommandPool(host->device, &pool, NULL, &host->pool));
  memset(&alloc, 0, sizeof alloc);
  alloc.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO;
  alloc.commandPool = host->pool;
  alloc.level = VK_COMMAND_BUFFER_LEVEL_PRIMARY;
  alloc.commandBufferCount = 1;
  VK_TRY(vkAllocateCommandBuffers(host->device, &alloc, &host->cmd));
  memset(&fence, 0, sizeof fence);
  fence.sType = VK_STRUCTURE_TYPE_FENCE_CREATE_INFO;
  VK_TRY(vkCreateFence(host->device, &fence, NULL, &host->fence));
  return 0;
}

static int import_ring(vulkan_host* host, wc_vulkan_export* exported) {
  VkExternalMemoryBufferCreateInfo external;
  VkBufferCreateInfo buffer;
  VkMemoryRequirements requirements;
  VkMemoryDedicatedAllocateInfo dedicated;
  VkImportMemoryFdInfoKHR import;
  VkMemoryAllocateInfo allocate;
  VkResult result;
  memset(&external, 0, sizeof external);
  external.sType = VK_STRUCTURE_TYPE_EXTERNAL_MEMORY_BUFFER_CREATE_INFO;
  external.handleTypes = VK_EXTERNAL_MEMORY_HANDLE_TYPE_OPAQUE_FD_BIT;
  memset(&buffer, 0, sizeof buffer);
  buffer.sType = VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO;
  buffer.pNext = &external;
  buffer.size = exported->buffer_size;
  buffer.usage = exported->buffer_usage;
  buffer.sharingMode = VK_SHARING_MODE_EXCLUSIVE;
  VK_TRY(vkCreateBuffer(host->device, &buffer, NULL, &host->ring));
  vkGetBufferMemoryRequirements(host->device, host->ring, &requirements);
  if (!(requirements.memoryTypeBits & (1u << exported->memory_type_index)) ||
      requirements.size > exported->allocation_size) {
    fprintf(stderr, "vulkan host: the exported memory does not fit the host's buffer\n");
    return -1;
  }
  memset(&dedicated, 0, sizeof dedicated);
  dedicated.sType = VK_STRUCTURE_TYPE_MEMORY_DEDICATED_ALLOCATE_INFO;
  dedicated.buffer = host->ring;
  memset(&import, 0, sizeof import);
  import.sType = VK_STRUCTURE_TYPE_IMPORT_MEMORY_FD_INFO_KHR;
  import.pNext = (exported->flags & WC_VULKAN_EXPORT_DEDICATED) ? &dedicated : NULL;
  import.handleType = VK_EXTERNAL_MEMORY_HANDLE_TYPE_OPAQUE_FD_BIT;
  import.fd = exported->memory_fd;
  memset(&allocate, 0, sizeof allocate);
  allocate.sType = VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO;
  allocate.pNext = &import;
  allocate.allocationSize = exported->allocation_size;
  allocate.memoryTypeIndex = exported->memory_type_index;
  result = vkAllocateMemory(host->device, &allocate, NULL, &host->ring_memory);
  if (result != VK_SUCCESS) {
    fprintf(stderr, "vulkan host: importing the frame memory failed (%d)\n", (int)result);
    return -1;
  }
  exported->memory_fd = -1; /* the import consumed it */
  VK_TRY(vkBindBufferMemory(host->device, host->ring, host->ring_memory, 0));

  if (exported->semaphore_fd >= 0) {
    VkSemaphoreTypeCreateInfo type;
    VkSemaphoreCreateInfo semaphore;
    VkImportSemaphoreFdInfoKHR import_semaphore;
    PFN_vkImportSemaphoreFdKHR import_fd =
        (PFN_vkImportSemaphoreFdKHR)vkGetDeviceProcAddr(host->device, "vkImportSemaphoreFdKHR");
    memset(&type, 0, sizeof type);
    type.sType = VK_STRUCTURE_TYPE_SEMAPHORE_TYPE_CREATE_INFO;
    type.semaphoreType = VK_SEMAPHORE_TYPE_TIMELINE;
    memset(&semaphore, 0, sizeof semaphore);
    semaphore.sType = VK_STRUCTURE_TYPE_SEMAPHORE_CREATE_INFO;
    semaphore.pNext = &type;
    VK_TRY(vkCreateSemaphore(host->device, &semaphore, NULL, &host->timeline));
    if (!import_fd) {
      fprintf(stderr, "vulkan host: vkImportSemaphoreFdKHR is missing\n");
      return -1;
    }
    memset(&import_semaphore, 0, sizeof import_semaphore);
    import_semaphore.sType = VK_STRUCTURE_TYPE_IMPORT_SEMAPHORE_FD_INFO_KHR;
    import_semaphore.semaphore = host->timeline;
    import_semaphore.handleType = VK_EXTERNAL_SEMAPHORE_HANDLE_TYPE_OPAQUE_FD_BIT;
    import_semaphore.fd = exported->semaphore_fd;
    VK_TRY(import_fd(host->device, &import_semaphore));
    exported->semaphore_fd = -1;
  }
  return 0;
}

static int create_image_and_readback(vulkan_host* host) {
  VkImageCreateInfo image;
  VkMemoryRequirements requirements;
  VkMemoryAllocateInfo allocate;
  VkBufferCreateInfo buffer;
  uint32_t type = 0;
  memset(&image, 0, sizeof image);
  image.sType = VK_STRUCTURE_TYPE_IMAGE_CREATE_INFO;
  image.imageType = VK_IMAGE_TYPE_2D;
  image.format = VK_FORMAT_R8G8B8A8_UNORM;
  image.extent.width = (uint32_t)host->width;
  image.extent.height = (uint32_t)host->height;
  image.extent.depth = 1;
  image.mipLevels = 1;
  image.arrayLayers = 1;
  image.samples = VK_SAMPLE_COUNT_1_BIT;
  image.tiling = VK_IMAGE_TILING_OPTIMAL;
  image.usage = VK_IMAGE_USAGE_TRANSFER_DST_BIT | VK_IMAGE_USAGE_TRANSFER_SRC_BIT |
                VK_IMAGE_USAGE_SAMPLED_BIT;
  image.sharingMode = VK_SHARING_MODE_EXCLUSIVE;
  image.initialLayout = VK_IMAGE_LAYOUT_UNDEFINED;
  VK_TRY(vkCreateImage(host->device, &image, NULL, &host->image));
  vkGetImageMemoryRequirements(host->device, host->image, &requirements);
  if (find_memory_type(host, requirements.memoryTypeBits, VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT,
                       &type)) {
    return -1;
  }
  memset(&allocate, 0, sizeof allocate);
  allocate.sType = VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO;
  allocate.allocationSize = requirements.size;
  allocate.memoryTypeIndex = type;
  VK_TRY(vkAllocateMemory(host->device, &allocate, NULL, &host->image_memory));
  VK_TRY(vkBindImageMemory(host->device, host->image, host->image_memory, 0));

  memset(&buffer, 0, sizeof buffer);
  buffer.sType = VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO;
  buffer.size = (VkDeviceSize)host->width * (VkDeviceSize)host->height * 4;
  buffer.usage = VK_BUFFER_USAGE_TRANSFER_DST_BIT;
  buffer.sharingMode = VK_SHARING_MODE_EXCLUSIVE;
  VK_TRY(vkCreateBuffer(host->device, &buffer, NULL, &host->readback));
  vkGetBufferMemoryRequirements(host->device, host->readback, &requirements);
  if (find_memory_type(host, requirements.memoryTypeBits,
                       VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT | VK_MEMORY_PROPERTY_HOST_COHERENT_BIT,
                       &type)) {
    return -1;
  }
  allocate.allocationSize = requirements.size;
  allocate.memoryTypeIndex = type;
  VK_TRY(vkAllocateMemory(host->device, &allocate, NULL, &host->readback_memory));
  VK_TRY(vkBindBufferMemory(host->device, host->readback, host->readback_memory, 0));
  VK_TRY(vkMapMemory(host->device, host->readback_memory, 0, VK_WHOLE_SIZE, 0,
                     &host->readback_mapped));
  return 0;
}

int vulkan_host_import(vulkan_host* host, wc_session session) {
  wc_vulkan_export exported;
  wc_result result;
  int status;
  memset(&exported, 0, sizeof exported);
  exported.struct_size = sizeof exported;
  result = wc_session_export_vulkan(session, &exported);
  if (result != WC_RESULT_OK) {
    fprintf(stderr, "wc_session_export_vulkan: %s\n", wc_result_string(result));
    return -1;
  }
  /* Opaque fds only import into the same device and driver. */
  if (memcmp(exported.device_uuid, host->device_uuid, VK_UUID_SIZE) != 0 ||
      memcmp(exported.driver_uuid, host->driver_uuid, VK_UUID_SIZE) != 0) {
    fprintf(stderr, "vulkan host: the plugin exported from another device or driver\n");
    status = -1;
  } else {
    host->width = exported.width;
    host->height = exported.height;
    status = import_ring(host, &exported);
    if (status == 0) status = create_image_and_readback(host);
  }
  if (exported.memory_fd >= 0) close(exported.memory_fd); /* not imported: still ours */
  if (exported.semaphore_fd >= 0) close(exported.semaphore_fd);
  return status;
}

static void buffer_barrier(VkCommandBuffer cmd, VkBuffer buffer, VkDeviceSize offset,
                           VkDeviceSize size, VkAccessFlags src_access, VkAccessFlags dst_access,
                           uint32_t src_family, uint32_t dst_family,
                           VkPipelineStageFlags src_stage, VkPipelineStageFlags dst_stage) {
  VkBufferMemoryBarrier barrier;
  memset(&barrier, 0, sizeof barrier);
  barrier.sType = VK_STRUCTURE_TYPE_BUFFER_MEMORY_BARRIER;
  barrier.srcAccessMask = src_access;
  barrier.dstAccessMask = dst_access;
  barrier.srcQueueFamilyIndex = src_family;
  barrier.dstQueueFamilyIndex = dst_family;
  barrier.buffer = buffer;
  barrier.offset = offset;
  barrier.size = size;
  vkCmdPipelineBarrier(cmd, src_stage, dst_stage, 0, 0, NULL, 1, &barrier, 0, NULL);
}

static void image_barrier(VkCommandBuffer cmd, VkImage image, VkImageLayout from,
                          VkImageLayout to, VkAccessFlags src_access, VkAccessFlags dst_access) {
  VkImageMemoryBarrier barrier;
  memset(&barrier, 0, sizeof barrier);
  barrier.sType = VK_STRUCTURE_TYPE_IMAGE_MEMORY_BARRIER;
  barrier.srcAccessMask = src_access;
  barrier.dstAccessMask = dst_access;
  barrier.oldLayout = from;
  barrier.newLayout = to;
  barrier.srcQueueFamilyIndex = VK_QUEUE_FAMILY_IGNORED;
  barrier.dstQueueFamilyIndex = VK_QUEUE_FAMILY_IGNORED;
  barrier.image = image;
  barrier.subresourceRange.aspectMask = VK_IMAGE_ASPECT_COLOR_BIT;
  barrier.subresourceRange.levelCount = 1;
  barrier.subresourceRange.layerCount = 1;
  vkCmdPipelineBarrier(cmd, VK_PIPELINE_STAGE_TRANSFER_BIT | VK_PIPELINE_STAGE_TOP_OF_PIPE_BIT,
                       VK_PIPELINE_STAGE_TRANSFER_BIT, 0, 0, NULL, 0, NULL, 1, &barrier);
}

int vulkan_host_read_frame(vulkan_host* host, wc_session session, uint8_t* rgba) {
  wc_frame_request request;
  wc_frame frame;
  wc_result result;
  VkCommandBufferBeginInfo begin;
  VkBufferImageCopy region;
  VkDeviceSize bytes = (VkDeviceSize)host->width * (VkDeviceSize)host->height * 4;
  VkSubmitInfo submit;
  VkTimelineSemaphoreSubmitInfo timeline;
  VkPipelineStageFlags wait_stage = VK_PIPELINE_STAGE_TRANSFER_BIT;
  memset(&request, 0, sizeof request);
  request.struct_size = sizeof request;
  request.kind = WC_FRAME_KIND_VULKAN;
  memset(&frame, 0, sizeof frame);
  frame.struct_size = sizeof frame;
  result = wc_session_get_frame(session, &request, &frame);
  if (WC_FAILED(result) || result == WC_RESULT_NOT_READY) {
    fprintf(stderr, "wc_session_get_frame (vulkan): %s\n", wc_result_string(result));
    return -1;
  }

  VK_TRY(vkResetCommandBuffer(host->cmd, 0));
  memset(&begin, 0, sizeof begin);
  begin.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO;
  begin.flags = VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT;
  VK_TRY(vkBeginCommandBuffer(host->cmd, &begin));
  /* Acquire the slot's bytes from the plugin's device (queue family ownership transfer). */
  buffer_barrier(host->cmd, host->ring, frame.vk_offset, bytes, 0, VK_ACCESS_TRANSFER_READ_BIT,
                 VK_QUEUE_FAMILY_EXTERNAL, host->queue_family, VK_PIPELINE_STAGE_TOP_OF_PIPE_BIT,
                 VK_PIPELINE_STAGE_TRANSFER_BIT);
  image_barrier(host->cmd, host->image, VK_IMAGE_LAYOUT_UNDEFINED,
                VK_IMAGE_LAYOUT_TRANSFER_DST_OPTIMAL, 0, VK_ACCESS_TRANSFER_WRITE_BIT);
  memset(&region, 0, sizeof region);
  region.bufferOffset = frame.vk_offset;
  region.bufferRowLength = frame.row_pitch / 4;
  region.imageSubresource.aspectMask = VK_IMAGE_ASPECT_COLOR_BIT;
  region.imageSubresource.layerCount = 1;
  region.imageExtent.width = (uint32_t)host->width;
  region.imageExtent.height = (uint32_t)host->height;
  region.imageExtent.depth = 1;
  vkCmdCopyBufferToImage(host->cmd, host->ring, host->image, VK_IMAGE_LAYOUT_TRANSFER_DST_OPTIMAL,
                         1, &region);
  /* Give the slot's bytes back before the plugin writes the slot again. */
  buffer_barrier(host->cmd, host->ring, frame.vk_offset, bytes, VK_ACCESS_TRANSFER_READ_BIT, 0,
                 host->queue_family, VK_QUEUE_FAMILY_EXTERNAL, VK_PIPELINE_STAGE_TRANSFER_BIT,
                 VK_PIPELINE_STAGE_BOTTOM_OF_PIPE_BIT);
  /* An engine would now sample the image; the example reads it back for its PNG. */
  image_barrier(host->cmd, host->image, VK_IMAGE_LAYOUT_TRANSFER_DST_OPTIMAL,
                VK_IMAGE_LAYOUT_TRANSFER_SRC_OPTIMAL, VK_ACCESS_TRANSFER_WRITE_BIT,
                VK_ACCESS_TRANSFER_READ_BIT);
  region.bufferOffset = 0;
  region.bufferRowLength = 0;
  vkCmdCopyImageToBuffer(host->cmd, host->image, VK_IMAGE_LAYOUT_TRANSFER_SRC_OPTIMAL,
                         host->readback, 1, &region);
  buffer_barrier(host->cmd, host->readback, 0, bytes, VK_ACCESS_TRANSFER_WRITE_BIT,
                 VK_ACCESS_HOST_READ_BIT, VK_QUEUE_FAMILY_IGNORED, VK_QUEUE_FAMILY_IGNORED,
                 VK_PIPELINE_STAGE_TRANSFER_BIT, VK_PIPELINE_STAGE_HOST_BIT);
  VK_TRY(vkEndCommandBuffer(host->cmd));

  memset(&timeline, 0, sizeof timeline);
  timeline.sType = VK_STRUCTURE_TYPE_TIMELINE_SEMAPHORE_SUBMIT_INFO;
  timeline.waitSemaphoreValueCount = 1;
  timeline.pWaitSemaphoreValues = &frame.vk_semaphore_value;
  memset(&submit, 0, sizeof submit);
  submit.sType = VK_STRUCTURE_TYPE_SUBMIT_INFO;
  if (host->timeline != VK_NULL_HANDLE) {
    /* Wait on the GPU for the plugin's write of this slot. */
    submit.pNext = &timeline;
    submit.waitSemaphoreCount = 1;
    submit.pWaitSemaphores = &host->timeline;
    submit.pWaitDstStageMask = &wait_stage;
  }
  submit.commandBufferCount = 1;
  submit.pCommandBuffers = &host->cmd;
  VK_TRY(vkResetFences(host->device, 1, &host->fence));
  VK_TRY(vkQueueSubmit(host->queue, 1, &submit, host->fence));
  VK_TRY(vkWaitForFences(host->device, 1, &host->fence, VK_TRUE, UINT64_MAX));
  memcpy(rgba, host->readback_mapped, (size_t)bytes);
  /* The copy has finished (fence): nothing reads the slot any more. */
  result = wc_session_release_frame(session, frame.release_token);
  if (result != WC_RESULT_OK) {
    fprintf(stderr, "wc_session_release_frame: %s\n", wc_result_string(result));
    return -1;
  }
  return 0;
}

uint64_t vulkan_host_validation_errors(const vulkan_host* host) {
  return host ? host->validation_errors : 0;
}

void vulkan_host_destroy(vulkan_host* host) {
  if (!host) return;
  if (host->device) {
    vkDeviceWaitIdle(host->device);
    if (host->fence) vkDestroyFence(host->device, host->fence, NULL);
    if (host->pool) vkDestroyCommandPool(host->device, host->pool, NULL);
    if (host->readback) vkDestroyBuffer(host->device, host->readback, NULL);
    if (host->readback_memory) vkFreeMemory(host->device, host->readback_memory, NULL);
    if (host->image) vkDestroyImage(host->device, host->image, NULL);
    if (host->image_memory) vkFreeMemory(host->device, host->image_memory, NULL);
    if (host->timeline) vkDestroySemaphore(host->device, host->timeline, NULL);
    if (host->ring) vkDestroyBuffer(host->device, host->ring, NULL);
    if (host->ring_memory) vkFreeMemory(host->device, host->ring_memory, NULL);
    vkDestroyDevice(host->device, NULL);
  }
  if (host->messenger) {
    PFN_vkDestroyDebugUtilsMessengerEXT destroy = (PFN_vkDestroyDebugUtilsMessengerEXT)
        vkGetInstanceProcAddr(host->instance, "vkDestroyDebugUtilsMessengerEXT");
    if (destroy) destroy(host->instance, host->messenger, NULL);
  }
  if (host->instance) vkDestroyInstance(host->instance, NULL);
  free(host);
}
