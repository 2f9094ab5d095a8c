// The Vulkan frame kind on this machine's device (lavapipe in CI): a second VkDevice (the
// example host's importer, created the way an engine would) imports the exported memory and
// reads back pixels equal to the CPU copy, with the validation layer on both devices; the
// extension list, the slot ring and its tokens. The timeline semaphore import needs a driver
// with VK_KHR_external_semaphore_fd: tests/gpu/plugin_gpu_test.cpp.
#include <gtest/gtest.h>
#include <unistd.h>
#include <worldcast/worldcast.h>

#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <string>
#include <vector>

#include "plugin/examples/vulkan_import.h"
#include "tests/plugin/plugin_test_util.h"
#include "tests/plugin/png_reader.h"

namespace wc::plugin_test {
namespace {

namespace fs = std::filesystem;

TEST(PluginVulkan, ListsTheExtensionsAHostMustEnable) {
  Runtime runtime(WC_RUNTIME_FLAG_VULKAN_VALIDATION);
  uint32_t count = 0;
  ASSERT_EQ(wc_runtime_vulkan_device_extensions(runtime.get(), nullptr, 0, &count), WC_RESULT_OK)
      << last_error();
  ASSERT_GE(count, 1u);
  std::vector<const char*> names(count);
  ASSERT_EQ(wc_runtime_vulkan_device_extensions(runtime.get(), names.data(), count, &count),
            WC_RESULT_OK);
  EXPECT_STREQ(names[0], "VK_KHR_external_memory_fd");
  if (count > 1) {
    EXPECT_STREQ(names[1], "VK_KHR_external_semaphore_fd");
  }
  const char* one = nullptr;
  if (count > 1) {
    EXPECT_EQ(wc_runtime_vulkan_device_extensions(runtime.get(), &one, 1, &count),
              WC_RESULT_INCOMPLETE);
  }
  EXPECT_EQ(wc_runtime_vulkan_device_extensions(runtime.get(), nullptr, 0, nullptr),
            WC_RESULT_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(wc_runtime_vulkan_device_extensions(runtime.get(), nullptr, 2, &count),
            WC_RESULT_ERROR_INVALID_ARGUMENT);
}

TEST(PluginVulkan, AnUnknownDeviceUuidIsUnsupported) {
  wc_runtime_desc desc = runtime_desc(WC_RUNTIME_FLAG_DEVICE_UUID);
  std::memset(desc.device_uuid, 0xee, sizeof(desc.device_uuid));
  wc_runtime runtime = WC_NULL_HANDLE;
  ASSERT_EQ(wc_runtime_create(&desc, &runtime), WC_RESULT_OK) << "the CPU needs no UUID";
  {
    Session session(runtime, game_desc());
    wc_vulkan_export exported{};
    exported.struct_size = sizeof(exported);
    EXPECT_EQ(wc_session_export_vulkan(session.get(), &exported), WC_RESULT_ERROR_UNSUPPORTED);
    EXPECT_NE(session_error(session.get()).find("deviceUUID"), std::string::npos)
        << session_error(session.get());
    const char* names[4];
    uint32_t count = 0;
    EXPECT_EQ(wc_runtime_vulkan_device_extensions(runtime, names, 4, &count),
              WC_RESULT_ERROR_UNSUPPORTED);
    exported.struct_size = 12;
    EXPECT_EQ(wc_session_export_vulkan(session.get(), &exported), WC_RESULT_ERROR_VERSION_MISMATCH);
    EXPECT_EQ(wc_session_export_vulkan(session.get(), nullptr), WC_RESULT_ERROR_INVALID_ARGUMENT);
  }
  EXPECT_EQ(wc_runtime_destroy(runtime), WC_RESULT_OK);
}

// The example host's importer against CPU copies, for host-visible and device-local rings.
class PluginVulkanImport : public ::testing::TestWithParam<bool> {};

TEST_P(PluginVulkanImport, ImportedFramesEqualTheCpuCopy) {
  const bool device_local = GetParam();
  uint8_t uuid[16];
  vulkan_host* host = vulkan_host_create(1, uuid);
  ASSERT_NE(host, nullptr);
  wc_runtime_desc desc =
      runtime_desc(WC_RUNTIME_FLAG_DEVICE_UUID | WC_RUNTIME_FLAG_VULKAN_VALIDATION |
                   (device_local ? WC_RUNTIME_FLAG_VULKAN_DEVICE_LOCAL : 0));
  std::memcpy(desc.device_uuid, uuid, 16);
  wc_runtime runtime = WC_NULL_HANDLE;
  ASSERT_EQ(wc_runtime_create(&desc, &runtime), WC_RESULT_OK) << last_error();
  ASSERT_EQ(vulkan_host_create_device(host, runtime), 0);
  {
    Session session(runtime, game_desc(23, 100, 60));  // not a multiple of any alignment
    wc_vulkan_export exported{};
    exported.struct_size = sizeof(exported);
    ASSERT_EQ(wc_session_export_vulkan(session.get(), &exported), WC_RESULT_OK)
        << session_error(session.get());
    EXPECT_GE(exported.memory_fd, 0);
    EXPECT_EQ(exported.slot_count, 3u);
    EXPECT_EQ(exported.width, 100);
    EXPECT_EQ(exported.height, 60);
    EXPECT_EQ(exported.row_pitch, 400u);
    EXPECT_GE(exported.slot_stride, 100u * 60u * 4u);
    EXPECT_EQ(exported.slot_stride % 256, 0u);
    EXPECT_EQ(exported.semaphore_fd < 0, (exported.flags & WC_VULKAN_EXPORT_HOST_SYNCHRONOUS) != 0);
    if (exported.memory_fd >= 0) close(exported.memory_fd);
    if (exported.semaphore_fd >= 0) close(exported.semaphore_fd);

    ASSERT_EQ(vulkan_host_import(host, session.get()), 0);
    std::vector<uint8_t> imported(100 * 60 * 4);
    for (int32_t action :
         {WC_ACTION_NONE, WC_ACTION_RIGHT, WC_ACTION_RIGHT, WC_ACTION_DOWN, WC_ACTION_LEFT}) {
      step(session.get(), action);
      ASSERT_EQ(vulkan_host_read_frame(host, session.get(), imported.data()), 0);
      EXPECT_EQ(imported, cpu_frame(session.get(), 100, 60)) << "action " << action;
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

INSTANTIATE_TEST_SUITE_P(Memory, PluginVulkanImport, ::testing::Values(false, true),
                         [](const ::testing::TestParamInfo<bool>& info) {
                           return info.param ? std::string("DeviceLocal")
                                             : std::string("HostVisible");
                         });

TEST(PluginVulkan, SlotsAreHeldUntilReleasedOnce) {
  Runtime runtime(WC_RUNTIME_FLAG_VULKAN_VALIDATION);
  Session session(runtime.get(), game_desc());
  wc_frame_request request{};
  request.struct_size = sizeof(request);
  request.kind = WC_FRAME_KIND_VULKAN;
  std::vector<wc_frame> frames(3, empty_frame());
  std::vector<uint64_t> values;
  for (wc_frame& frame : frames) {
    ASSERT_EQ(wc_session_get_frame(session.get(), &request, &frame), WC_RESULT_OK)
        << session_error(session.get());
    EXPECT_NE(frame.release_token, 0u);
    values.push_back(frame.vk_semaphore_value);
  }
  EXPECT_LT(values[0], values[1]);
  EXPECT_LT(values[1], values[2]);
  EXPECT_NE(frames[0].vk_slot, frames[1].vk_slot);
  EXPECT_NE(frames[1].vk_slot, frames[2].vk_slot);
  wc_frame fourth = empty_frame();
  fourth.frame_index = 1234;
  EXPECT_EQ(wc_session_get_frame(session.get(), &request, &fourth), WC_RESULT_NOT_READY);
  EXPECT_EQ(fourth.frame_index, 1234u) << "nothing is returned with NOT_READY";

  ASSERT_EQ(wc_session_release_frame(session.get(), frames[1].release_token), WC_RESULT_OK);
  EXPECT_EQ(wc_session_release_frame(session.get(), frames[1].release_token),
            WC_RESULT_ERROR_INVALID_HANDLE);
  ASSERT_EQ(wc_session_get_frame(session.get(), &request, &fourth), WC_RESULT_OK);
  EXPECT_EQ(fourth.vk_slot, frames[1].vk_slot);
  EXPECT_NE(fourth.release_token, frames[1].release_token) << "tokens are never reused";
  EXPECT_EQ(wc_session_release_frame(session.get(), frames[1].release_token),
            WC_RESULT_ERROR_INVALID_HANDLE);
  for (const wc_frame* frame : {&frames[0], &frames[2], &fourth}) {
    EXPECT_EQ(wc_session_release_frame(session.get(), frame->release_token), WC_RESULT_OK);
  }
  // A token of another session is not this session's.
  Session other(runtime.get(), game_desc());
  wc_frame theirs = empty_frame();
  ASSERT_EQ(wc_session_get_frame(other.get(), &request, &theirs), WC_RESULT_OK);
  wc_frame mine = empty_frame();
  ASSERT_EQ(wc_session_get_frame(session.get(), &request, &mine), WC_RESULT_OK);
  EXPECT_EQ(wc_session_release_frame(other.get(), theirs.release_token), WC_RESULT_OK);
  EXPECT_EQ(wc_session_release_frame(session.get(), theirs.release_token + (1ull << 40)),
            WC_RESULT_ERROR_INVALID_HANDLE);
  wc_stats stats{};
  stats.struct_size = sizeof(stats);
  ASSERT_EQ(wc_session_get_stats(session.get(), &stats), WC_RESULT_OK);
  EXPECT_EQ(stats.vulkan_validation_errors, 0u);
}

std::string frame_file(const fs::path& dir, int index) {
  char name[32];
  std::snprintf(name, sizeof(name), "frame_%05d.png", index);
  return (dir / name).string();
}

int run(const std::string& command) {
  const int status = std::system((command + " > /dev/null").c_str());
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

TEST(PluginVulkan, ExampleHostImportPathEqualsItsCpuPath) {
  const fs::path root = fs::temp_directory_path() / "wc_plugin_vulkan_host";
  fs::remove_all(root);
  const std::string common = std::string(WC_TEST_HOST) + " --game 128x128 --seed 31 --frames 6 " +
                             "--actions " WC_TEST_DATA "/walk.actions";
  ASSERT_EQ(run(common + " --out " + (root / "cpu").string()), 0);
  // --validate: validation on the host's device and the plugin's; any error exits non-zero.
  ASSERT_EQ(run(common + " --vulkan --validate --out " + (root / "vulkan").string()), 0);
  ASSERT_EQ(run(common + " --vulkan --validate --device-local --out " + (root / "local").string()),
            0);
  for (int i = 0; i < 6; ++i) {
    const Png cpu = read_png(frame_file(root / "cpu", i));
    ASSERT_EQ(cpu.width, 128) << frame_file(root / "cpu", i);
    EXPECT_EQ(read_png(frame_file(root / "vulkan", i)).rgba, cpu.rgba) << "frame " << i;
    EXPECT_EQ(read_png(frame_file(root / "local", i)).rgba, cpu.rgba) << "frame " << i;
  }
}

}  // namespace
}  // namespace wc::plugin_test
