// The plugin's GPU frame kinds (label gpu; built by tests/plugin/CMakeLists.txt): a separate
// Vulkan device imports the exported memory AND timeline semaphore and reads back pixels equal
// to the CPU copy (needs VK_KHR_external_semaphore_fd, which lavapipe lacks), and CUDA frames
// equal the CPU copy. Skipped with the reason where the device cannot do it.
#include <gtest/gtest.h>
#include <unistd.h>
#include <worldcast/worldcast.h>

#include <cstring>
#include <vector>

#include "plugin/examples/vulkan_import.h"
#include "tests/plugin/plugin_test_util.h"

#if defined(WC_TEST_HAS_CUDA)
#include <cuda_runtime_api.h>
#endif

namespace wc::plugin_test {
namespace {

class PluginGpuVulkan : public ::testing::TestWithParam<bool> {};

TEST_P(PluginGpuVulkan, SemaphoreAndMemoryImportEqualTheCpuCopy) {
  const bool device_local = GetParam();
  uint8_t uuid[16];
  // Validation where the layer is installed (it may not be carried to the GPU machine).
  int validate = 1;
  vulkan_host* host = vulkan_host_create(validate, uuid);
  if (!host) {
    validate = 0;
    host = vulkan_host_create(validate, uuid);
  }
  if (!host) GTEST_SKIP() << "no Vulkan 1.2 device";
  uint32_t flags = WC_RUNTIME_FLAG_DEVICE_UUID |
                   (validate ? WC_RUNTIME_FLAG_VULKAN_VALIDATION : 0u) |
                   (device_local ? WC_RUNTIME_FLAG_VULKAN_DEVICE_LOCAL : 0u);
  wc_runtime_desc desc = runtime_desc(flags);
  desc.log_level = WC_LOG_ERROR;  // validation messages to stderr, so a failure shows them
  desc.device = WC_DEVICE_AUTO;   // the model on the GPU with this UUID when it is a CUDA device
  std::memcpy(desc.device_uuid, uuid, 16);
  wc_runtime runtime = WC_NULL_HANDLE;
  ASSERT_EQ(wc_runtime_create(&desc, &runtime), WC_RESULT_OK) << last_error();
  uint32_t count = 0;
  ASSERT_EQ(wc_runtime_vulkan_device_extensions(runtime, nullptr, 0, &count), WC_RESULT_OK)
      << last_error();
  if (count < 2) {
    wc_runtime_destroy(runtime);
    vulkan_host_destroy(host);
    GTEST_SKIP() << "this Vulkan device cannot export timeline semaphores "
                    "(no VK_KHR_external_semaphore_fd, e.g. lavapipe)";
  }
  ASSERT_EQ(vulkan_host_create_device(host, runtime), 0);
  {
    Session session(runtime, model_desc("headcast", nullptr, 13));
    wc_vulkan_export exported{};
    exported.struct_size = sizeof(exported);
    ASSERT_EQ(wc_session_export_vulkan(session.get(), &exported), WC_RESULT_OK)
        << session_error(session.get());
    EXPECT_GE(exported.semaphore_fd, 0);
    EXPECT_EQ(exported.flags & WC_VULKAN_EXPORT_HOST_SYNCHRONOUS, 0u);
    close(exported.memory_fd);
    if (exported.semaphore_fd >= 0) close(exported.semaphore_fd);
    ASSERT_EQ(vulkan_host_import(host, session.get()), 0);  // imports memory and semaphore
    std::vector<uint8_t> imported(128 * 128 * 4);
    for (int32_t action : {WC_ACTION_RIGHT, WC_ACTION_RIGHT, WC_ACTION_DOWN, WC_ACTION_LEFT}) {
      step(session.get(), action);
      ASSERT_EQ(vulkan_host_read_frame(host, session.get(), imported.data()), 0);
      EXPECT_EQ(imported, cpu_frame(session.get())) << "action " << action;
    }
    wc_stats stats{};
    stats.struct_size = sizeof(stats);
    ASSERT_EQ(wc_session_get_stats(session.get(), &stats), WC_RESULT_OK);
    EXPECT_EQ(stats.vulkan_validation_errors, 0u);
  }
  EXPECT_EQ(vulkan_host_validation_errors(host), 0u);
  EXPECT_EQ(wc_runtime_destroy(runtime), WC_RESULT_OK);
  vulkan_host_destroy(host);
}

INSTANTIATE_TEST_SUITE_P(Memory, PluginGpuVulkan, ::testing::Values(false, true),
                         [](const ::testing::TestParamInfo<bool>& info) {
                           return info.param ? std::string("DeviceLocal")
                                             : std::string("HostVisible");
                         });

TEST(PluginGpuCuda, CudaFramesEqualTheCpuCopy) {
#if !defined(WC_TEST_HAS_CUDA)
  GTEST_SKIP() << "built without WORLDCAST_CUDA";
#else
  int devices = 0;
  if (cudaGetDeviceCount(&devices) != cudaSuccess || devices == 0) {
    GTEST_SKIP() << "no CUDA device";
  }
  wc_runtime_desc desc = runtime_desc();
  desc.device = WC_DEVICE_CUDA;
  wc_runtime runtime = WC_NULL_HANDLE;
  ASSERT_EQ(wc_runtime_create(&desc, &runtime), WC_RESULT_OK) << last_error();
  {
    Session session(runtime, model_desc("headcast", nullptr, 13));
    wc_frame_request request{};
    request.struct_size = sizeof(request);
    request.kind = WC_FRAME_KIND_CUDA;
    std::vector<uint8_t> from_device(128 * 128 * 4);
    std::vector<uint64_t> tokens;
    for (int32_t action : {WC_ACTION_RIGHT, WC_ACTION_DOWN, WC_ACTION_DOWN}) {
      step(session.get(), action);
      wc_frame frame = empty_frame();
      ASSERT_EQ(wc_session_get_frame(session.get(), &request, &frame), WC_RESULT_OK)
          << session_error(session.get());
      ASSERT_NE(frame.cuda_device_ptr, 0u);
      EXPECT_EQ(frame.row_pitch, 128u * 4u);
      // A host orders its reads after the plugin's stream; here: wait for it, then copy.
      ASSERT_EQ(cudaStreamSynchronize(static_cast<cudaStream_t>(frame.cuda_stream)), cudaSuccess);
      ASSERT_EQ(cudaMemcpy(from_device.data(), reinterpret_cast<void*>(frame.cuda_device_ptr),
                           from_device.size(), cudaMemcpyDeviceToHost),
                cudaSuccess);
      EXPECT_EQ(from_device, cpu_frame(session.get()));
      tokens.push_back(frame.release_token);
    }
    // Three slots held: the fourth get waits for a release.
    wc_frame frame = empty_frame();
    EXPECT_EQ(wc_session_get_frame(session.get(), &request, &frame), WC_RESULT_NOT_READY);
    for (uint64_t token : tokens) {
      EXPECT_EQ(wc_session_release_frame(session.get(), token), WC_RESULT_OK);
    }
  }
  EXPECT_EQ(wc_runtime_destroy(runtime), WC_RESULT_OK);
#endif
}

}  // namespace
}  // namespace wc::plugin_test
