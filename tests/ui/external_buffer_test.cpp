// The exportable slot buffer of the GPU frame path on lavapipe, with validation: its memory is
// exported as an opaque fd, imported by a second VkDevice that writes a pattern into it, and the
// first device then reads the pattern through the same ownership barriers the CUDA sink records.
// Also: lavapipe cannot export timeline semaphores, and says so (the CUDA path's fallback reason).
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstring>
#include <memory>
#include <vector>

#include "engine/core/error.h"
#include "ui/vulkan/buffer.h"
#include "ui/vulkan/check.h"
#include "ui/vulkan/context.h"
#include "ui/vulkan/external_buffer.h"
#include "ui/vulkan/external_timeline.h"
#include "ui/vulkan/image.h"

namespace wc::ui::vk {
namespace {

using ::testing::HasSubstr;

ContextOptions interop_options() {
  ContextOptions options;
  options.validation = true;
  options.external_interop = true;
  return options;
}

// A VkBuffer on `context` bound to the memory behind `fd` (ownership of fd passes to Vulkan).
struct ImportedBuffer {
  VkDevice device = VK_NULL_HANDLE;
  VkBuffer buffer = VK_NULL_HANDLE;
  VkDeviceMemory memory = VK_NULL_HANDLE;

  ImportedBuffer(const Context& context, const ExternalBuffer& source, int fd)
      : device(context.device()) {
    VkExternalMemoryBufferCreateInfo external{};
    external.sType = VK_STRUCTURE_TYPE_EXTERNAL_MEMORY_BUFFER_CREATE_INFO;
    external.handleTypes = VK_EXTERNAL_MEMORY_HANDLE_TYPE_OPAQUE_FD_BIT;
    VkBufferCreateInfo info{};
    info.sType = VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO;
    info.pNext = &external;
    info.size = source.size();
    info.usage = VK_BUFFER_USAGE_TRANSFER_DST_BIT;
    info.sharingMode = VK_SHARING_MODE_EXCLUSIVE;
    check(vkCreateBuffer(device, &info, nullptr, &buffer), "vkCreateBuffer(import)");

    VkMemoryDedicatedAllocateInfo dedicated{};
    dedicated.sType = VK_STRUCTURE_TYPE_MEMORY_DEDICATED_ALLOCATE_INFO;
    dedicated.buffer = buffer;
    VkImportMemoryFdInfoKHR import{};
    import.sType = VK_STRUCTURE_TYPE_IMPORT_MEMORY_FD_INFO_KHR;
    import.pNext = source.dedicated() ? &dedicated : nullptr;
    import.handleType = VK_EXTERNAL_MEMORY_HANDLE_TYPE_OPAQUE_FD_BIT;
    import.fd = fd;
    VkMemoryAllocateInfo alloc{};
    alloc.sType = VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO;
    alloc.pNext = &import;
    alloc.allocationSize = source.allocation_size();
    // An opaque fd is imported with the exporter's size and memory type (same physical device).
    alloc.memoryTypeIndex = source.memory_type_index();
    check(vkAllocateMemory(device, &alloc, nullptr, &memory), "vkAllocateMemory(import fd)");
    check(vkBindBufferMemory(device, buffer, memory, 0), "vkBindBufferMemory(import)");
  }
  ~ImportedBuffer() {
    vkDestroyBuffer(device, buffer, nullptr);
    vkFreeMemory(device, memory, nullptr);
  }
};

TEST(ExternalBuffer, SecondDeviceWritesWhatTheFirstReads) {
  Context owner(interop_options());
  const std::string reason = ExternalBuffer::unsupported_reason(
      owner, VK_BUFFER_USAGE_TRANSFER_SRC_BIT | VK_BUFFER_USAGE_TRANSFER_DST_BIT);
  ASSERT_EQ(reason, "") << "lavapipe offers VK_KHR_external_memory_fd with opaque fds";

  constexpr uint32_t kWidth = 48, kHeight = 20;
  constexpr VkDeviceSize kBytes = VkDeviceSize{kWidth} * kHeight * 4;
  ExternalBuffer slot(owner, kBytes, VK_BUFFER_USAGE_TRANSFER_SRC_BIT);
  EXPECT_EQ(slot.size(), kBytes);
  EXPECT_GE(slot.allocation_size(), kBytes);

  // The writer: another instance and device, as CUDA is another API on the same GPU. It keeps
  // the slot imported while the owner reads it several times, as the frame ring reuses a slot
  // (each read acquires the buffer from and releases it back to the external side).
  Context writer(interop_options());
  ASSERT_EQ(std::memcmp(writer.device_uuid().data(), owner.device_uuid().data(), VK_UUID_SIZE), 0);
  ImportedBuffer imported(writer, slot, slot.export_fd());
  Buffer staging(writer, kBytes, VK_BUFFER_USAGE_TRANSFER_SRC_BIT, kHostMemory);

  // The reader: the same acquire -> copy into an image -> release sequence as the CUDA sink.
  Image image(owner, kWidth, kHeight, VK_FORMAT_R8G8B8A8_UNORM,
              VK_IMAGE_USAGE_TRANSFER_DST_BIT | VK_IMAGE_USAGE_TRANSFER_SRC_BIT |
                  VK_IMAGE_USAGE_SAMPLED_BIT);
  Buffer readback(owner, kBytes, VK_BUFFER_USAGE_TRANSFER_DST_BIT, kHostMemory);
  for (int round = 0; round < 3; ++round) {
    std::vector<uint8_t> pattern(kBytes);
    for (size_t i = 0; i < pattern.size(); ++i) {
      pattern[i] = static_cast<uint8_t>(i * 7 + i / 251 + 31 * round);
    }
    std::memcpy(staging.mapped(), pattern.data(), pattern.size());
    writer.submit_and_wait([&](VkCommandBuffer cmd) {
      const VkBufferCopy region{0, 0, kBytes};
      vkCmdCopyBuffer(cmd, staging.handle(), imported.buffer, 1, &region);
    });

    owner.submit_and_wait([&](VkCommandBuffer cmd) {
      record_acquire_from_external(cmd, slot.handle(), owner.queue_family(),
                                   VK_PIPELINE_STAGE_TRANSFER_BIT, VK_ACCESS_TRANSFER_READ_BIT);
      record_transition(cmd, image.handle(),
                        {VK_IMAGE_LAYOUT_UNDEFINED, VK_IMAGE_LAYOUT_TRANSFER_DST_OPTIMAL,
                         VK_PIPELINE_STAGE_TRANSFER_BIT, 0, VK_PIPELINE_STAGE_TRANSFER_BIT,
                         VK_ACCESS_TRANSFER_WRITE_BIT});
      const VkBufferImageCopy region = whole_image_copy(kWidth, kHeight);
      vkCmdCopyBufferToImage(cmd, slot.handle(), image.handle(),
                             VK_IMAGE_LAYOUT_TRANSFER_DST_OPTIMAL, 1, &region);
      record_release_to_external(cmd, slot.handle(), owner.queue_family(),
                                 VK_PIPELINE_STAGE_TRANSFER_BIT, VK_ACCESS_TRANSFER_READ_BIT);
      record_transition(cmd, image.handle(),
                        {VK_IMAGE_LAYOUT_TRANSFER_DST_OPTIMAL, VK_IMAGE_LAYOUT_TRANSFER_SRC_OPTIMAL,
                         VK_PIPELINE_STAGE_TRANSFER_BIT, VK_ACCESS_TRANSFER_WRITE_BIT,
                         VK_PIPELINE_STAGE_TRANSFER_BIT, VK_ACCESS_TRANSFER_READ_BIT});
      vkCmdCopyImageToBuffer(cmd, image.handle(), VK_IMAGE_LAYOUT_TRANSFER_SRC_OPTIMAL,
                             readback.handle(), 1, &region);
      VkMemoryBarrier to_host{};
      to_host.sType = VK_STRUCTURE_TYPE_MEMORY_BARRIER;
      to_host.srcAccessMask = VK_ACCESS_TRANSFER_WRITE_BIT;
      to_host.dstAccessMask = VK_ACCESS_HOST_READ_BIT;
      vkCmdPipelineBarrier(cmd, VK_PIPELINE_STAGE_TRANSFER_BIT, VK_PIPELINE_STAGE_HOST_BIT, 0, 1,
                           &to_host, 0, nullptr, 0, nullptr);
    });
    const auto* pixels = static_cast<const uint8_t*>(readback.mapped());
    EXPECT_EQ(std::vector<uint8_t>(pixels, pixels + kBytes), pattern) << "round " << round;
  }
  EXPECT_EQ(writer.validation_errors(), 0u);
  EXPECT_EQ(owner.validation_errors(), 0u);
}

TEST(ExternalBuffer, EachExportIsAFreshFd) {
  Context context(interop_options());
  ExternalBuffer slot(context, 4096, VK_BUFFER_USAGE_TRANSFER_SRC_BIT);
  const int a = slot.export_fd();
  const int b = slot.export_fd();
  EXPECT_GE(a, 0);
  EXPECT_GE(b, 0);
  EXPECT_NE(a, b);
  close(a);
  close(b);
  EXPECT_EQ(context.validation_errors(), 0u);
}

TEST(ExternalBuffer, NeedsTheInteropExtensionsEnabled) {
  ContextOptions options;
  options.validation = true;  // external_interop off
  Context context(options);
  EXPECT_FALSE(context.has_device_extension(VK_KHR_EXTERNAL_MEMORY_FD_EXTENSION_NAME));
  EXPECT_THAT(ExternalBuffer::unsupported_reason(context, VK_BUFFER_USAGE_TRANSFER_SRC_BIT),
              HasSubstr("VK_KHR_external_memory_fd"));
  try {
    ExternalBuffer slot(context, 64, VK_BUFFER_USAGE_TRANSFER_SRC_BIT);
    ADD_FAILURE() << "an exportable buffer without the extension";
  } catch (const Error& error) {
    EXPECT_THAT(error.what(), HasSubstr("VK_KHR_external_memory_fd"));
  }
}

TEST(ExternalTimeline, LavapipeCannotExportOneAndSaysWhy) {
  Context context(interop_options());
  // Lavapipe (Mesa 22) has no VK_KHR_external_semaphore_fd: the CUDA path cannot run here, and
  // the reason it falls back with names the missing extension.
  if (context.has_device_extension(VK_KHR_EXTERNAL_SEMAPHORE_FD_EXTENSION_NAME)) {
    ExternalTimeline timeline(context);
    const int fd = timeline.export_fd();
    EXPECT_GE(fd, 0);
    close(fd);
    EXPECT_EQ(timeline.value(), 0u);
  } else {
    EXPECT_THAT(ExternalTimeline::unsupported_reason(context),
                HasSubstr("VK_KHR_external_semaphore_fd"));
    EXPECT_THROW(ExternalTimeline timeline(context), Error);
  }
  EXPECT_EQ(context.validation_errors(), 0u);
}

}  // namespace
}  // namespace wc::ui::vk
