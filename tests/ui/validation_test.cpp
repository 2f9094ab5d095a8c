// Proves the debug messenger really sees device-level validation errors (see Note [Real
// messenger] in ui/vulkan/validation.cpp): otherwise "zero errors" in other tests means nothing.
#include <gtest/gtest.h>

#include "ui/vulkan/context.h"

namespace wc::ui {
namespace {

TEST(Validation, MessengerCountsDeviceLevelErrors) {
  vk::ContextOptions options;
  options.validation = true;
  vk::Context context(options);
  ASSERT_TRUE(context.validation_enabled());
  EXPECT_EQ(context.validation_errors(), 0u);

  // A zero-sized buffer breaks VUID-VkBufferCreateInfo-size-00912; the layer reports it and
  // does not pass the call down, so the driver never sees it.
  VkBufferCreateInfo info{};
  info.sType = VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO;
  info.size = 0;
  info.usage = VK_BUFFER_USAGE_TRANSFER_SRC_BIT;
  info.sharingMode = VK_SHARING_MODE_EXCLUSIVE;
  VkBuffer buffer = VK_NULL_HANDLE;
  const VkResult result = vkCreateBuffer(context.device(), &info, nullptr, &buffer);
  if (result == VK_SUCCESS && buffer != VK_NULL_HANDLE) {
    vkDestroyBuffer(context.device(), buffer, nullptr);
  }
  EXPECT_GT(context.validation_errors(), 0u);
}

TEST(Validation, CleanContextHasNoErrors) {
  vk::ContextOptions options;
  options.validation = true;
  vk::Context context(options);
  EXPECT_FALSE(context.device_name().empty());
  EXPECT_GE(context.api_version(), static_cast<uint32_t>(VK_API_VERSION_1_2));
  EXPECT_EQ(context.validation_errors(), 0u);
}

}  // namespace
}  // namespace wc::ui
