// The C ABI through its public header only: versioning, every result code reachable from bad
// input (null/stale/wrong-type handles, struct sizes, files, policies, JSON), the C translation
// unit, frames as CPU copies, actions and the log callback.
#include <gtest/gtest.h>
#include <worldcast/worldcast.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <functional>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "tests/plugin/c_header_test.h"
#include "tests/plugin/plugin_test_util.h"

namespace wc::plugin_test {
namespace {

namespace fs = std::filesystem;

fs::path temp_dir(const std::string& name) {
  const fs::path dir = fs::temp_directory_path() / ("wc_plugin_api_" + name);
  fs::remove_all(dir);
  fs::create_directories(dir);
  return dir;
}

void write_file(const fs::path& path, const std::string& bytes) {
  std::ofstream out(path, std::ios::binary);
  out << bytes;
}

TEST(PluginAbi, VersionAndResultStrings) {
  EXPECT_EQ(wc_abi_version(), WC_ABI_VERSION);
  EXPECT_EQ(WC_VERSION_MAJOR(WC_ABI_VERSION), 1u);
  const std::vector<wc_result> codes = {WC_RESULT_OK,
                                        WC_RESULT_NOT_READY,
                                        WC_RESULT_FRAME_DROPPED,
                                        WC_RESULT_INCOMPLETE,
                                        WC_RESULT_ERROR_INVALID_ARGUMENT,
                                        WC_RESULT_ERROR_INVALID_HANDLE,
                                        WC_RESULT_ERROR_OUT_OF_MEMORY,
                                        WC_RESULT_ERROR_UNSUPPORTED,
                                        WC_RESULT_ERROR_VERSION_MISMATCH,
                                        WC_RESULT_ERROR_BAD_CHECKPOINT,
                                        WC_RESULT_ERROR_DEVICE_LOST,
                                        WC_RESULT_ERROR_INTERNAL,
                                        WC_RESULT_ERROR_BUFFER_TOO_SMALL,
                                        WC_RESULT_ERROR_IO};
  std::set<std::string> names;
  for (wc_result code : codes) {
    const std::string name = wc_result_string(code);
    EXPECT_EQ(name.rfind("WC_RESULT_", 0), 0u) << code;
    EXPECT_NE(name, "WC_RESULT_UNKNOWN") << code;
    names.insert(name);
    EXPECT_EQ(WC_SUCCEEDED(code), code >= 0);
    EXPECT_EQ(WC_FAILED(code), code < 0);
  }
  EXPECT_EQ(names.size(), codes.size());
  EXPECT_STREQ(wc_result_string(12345), "WC_RESULT_UNKNOWN");
}

TEST(PluginAbi, HeaderCompilesAsCAndDrivesASession) {
  std::vector<uint8_t> from_c(128 * 128 * 4);
  int width = 0, height = 0;
  ASSERT_EQ(wc_c_host_smoke(11, 3, from_c.data(), &width, &height), 0) << last_error();
  EXPECT_EQ(width, 128);
  EXPECT_EQ(height, 128);
  // The same run from C++ gives the same pixels.
  Runtime runtime;
  Session session(runtime.get(), game_desc(11));
  for (int i = 0; i < 3; ++i) step(session.get(), WC_ACTION_RIGHT);
  EXPECT_EQ(cpu_frame(session.get()), from_c);
}

TEST(PluginRuntime, RejectsBadDescriptors) {
  wc_runtime runtime = 42;
  wc_runtime_desc desc = runtime_desc();
  EXPECT_EQ(wc_runtime_create(nullptr, &runtime), WC_RESULT_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(runtime, WC_NULL_HANDLE) << "the out handle is cleared on failure";
  EXPECT_EQ(wc_runtime_create(&desc, nullptr), WC_RESULT_ERROR_INVALID_ARGUMENT);

  desc.struct_size = 0;
  EXPECT_EQ(wc_runtime_create(&desc, &runtime), WC_RESULT_ERROR_VERSION_MISMATCH);
  EXPECT_NE(last_error().find("struct_size"), std::string::npos) << last_error();
  desc.struct_size = 8;
  EXPECT_EQ(wc_runtime_create(&desc, &runtime), WC_RESULT_ERROR_VERSION_MISMATCH);

  desc = runtime_desc();
  desc.abi_version = WC_MAKE_VERSION(2, 0, 0);
  EXPECT_EQ(wc_runtime_create(&desc, &runtime), WC_RESULT_ERROR_VERSION_MISMATCH);
  EXPECT_NE(last_error().find("WC_ABI_VERSION"), std::string::npos) << last_error();
  desc.abi_version = 0;  // a host that forgot to set it
  EXPECT_EQ(wc_runtime_create(&desc, &runtime), WC_RESULT_ERROR_VERSION_MISMATCH);

  desc = runtime_desc();
  desc.device = 7;
  EXPECT_EQ(wc_runtime_create(&desc, &runtime), WC_RESULT_ERROR_INVALID_ARGUMENT);
  desc = runtime_desc(0x100);
  EXPECT_EQ(wc_runtime_create(&desc, &runtime), WC_RESULT_ERROR_INVALID_ARGUMENT);
  EXPECT_NE(last_error().find("0x100"), std::string::npos) << last_error();
  desc = runtime_desc();
  desc.log_level = -3;
  EXPECT_EQ(wc_runtime_create(&desc, &runtime), WC_RESULT_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(runtime, WC_NULL_HANDLE);
}

TEST(PluginRuntime, CudaDeviceNeedsACudaBuild) {
  wc_runtime_desc desc = runtime_desc();
  desc.device = WC_DEVICE_CUDA;
  wc_runtime runtime = WC_NULL_HANDLE;
  const wc_result result = wc_runtime_create(&desc, &runtime);
  if (!WC_TEST_CUDA_BUILD) {
    EXPECT_EQ(result, WC_RESULT_ERROR_UNSUPPORTED);
    EXPECT_NE(last_error().find("WORLDCAST_CUDA"), std::string::npos) << last_error();
  } else {
    EXPECT_TRUE(result == WC_RESULT_OK || result == WC_RESULT_ERROR_UNSUPPORTED);
  }
  if (runtime != WC_NULL_HANDLE) wc_runtime_destroy(runtime);
}

TEST(PluginRuntime, AcceptsAStructFromANewerHeader) {
  // A newer header's struct is longer; the library reads the fields it knows.
  struct Newer {
    wc_runtime_desc known;
    uint64_t future_fields[8];
  } newer{};
  newer.known = runtime_desc();
  newer.known.struct_size = sizeof(newer);
  std::fill(std::begin(newer.future_fields), std::end(newer.future_fields), ~0ull);
  wc_runtime runtime = WC_NULL_HANDLE;
  ASSERT_EQ(wc_runtime_create(&newer.known, &runtime), WC_RESULT_OK) << last_error();
  EXPECT_EQ(wc_runtime_destroy(runtime), WC_RESULT_OK);
}

TEST(PluginHandles, NullStaleAndWrongTypeHandlesAreRejected) {
  Runtime runtime;
  wc_session destroyed = WC_NULL_HANDLE;
  wc_session_desc desc = game_desc();
  ASSERT_EQ(wc_session_create(runtime.get(), &desc, &destroyed), WC_RESULT_OK);
  ASSERT_EQ(wc_session_destroy(destroyed), WC_RESULT_OK);
  // A new session may reuse storage; the stale handle must still not reach it.
  Session live(runtime.get(), game_desc());
  ASSERT_NE(live.get(), destroyed);

  std::vector<uint8_t> pixels(128 * 128 * 4);
  const wc_frame_request request = cpu_request(pixels);
  wc_frame frame = empty_frame();
  wc_stats stats{};
  stats.struct_size = sizeof(stats);
  wc_session_info info{};
  info.struct_size = sizeof(info);
  wc_vulkan_export exported{};
  exported.struct_size = sizeof(exported);
  char text[64];
  uint32_t length = 0;
  const std::vector<std::pair<const char*, std::function<wc_result(wc_session)>>> calls = {
      {"destroy", [](wc_session s) { return wc_session_destroy(s); }},
      {"last_error", [&](wc_session s) { return wc_session_last_error(s, text, 64, &length); }},
      {"get_info", [&](wc_session s) { return wc_session_get_info(s, &info); }},
      {"push_action", [](wc_session s) { return wc_session_push_action(s, 0); }},
      {"step", [](wc_session s) { return wc_session_step(s, 0); }},
      {"reset", [](wc_session s) { return wc_session_reset(s, 1); }},
      {"get_frame", [&](wc_session s) { return wc_session_get_frame(s, &request, &frame); }},
      {"release_frame", [](wc_session s) { return wc_session_release_frame(s, 1); }},
      {"export_vulkan", [&](wc_session s) { return wc_session_export_vulkan(s, &exported); }},
      {"get_stats", [&](wc_session s) { return wc_session_get_stats(s, &stats); }},
      {"set_settings", [](wc_session s) { return wc_session_set_settings(s, "{}"); }},
      {"get_settings", [&](wc_session s) { return wc_session_get_settings(s, text, 64, &length); }},
      {"set_play_settings", [](wc_session s) { return wc_session_set_play_settings(s, "{}"); }},
      {"get_play_settings",
       [&](wc_session s) { return wc_session_get_play_settings(s, text, 64, &length); }},
      {"set_policy", [](wc_session s) { return wc_session_set_policy(s, "dense", nullptr); }},
      {"save_state", [](wc_session s) { return wc_session_save_state(s, "/tmp/x.state"); }},
      {"load_state", [](wc_session s) { return wc_session_load_state(s, "/tmp/x.state"); }},
  };
  const std::vector<std::pair<const char*, wc_session>> bad = {{"null", WC_NULL_HANDLE},
                                                               {"destroyed", destroyed},
                                                               {"runtime handle", runtime.get()},
                                                               {"garbage", 0x530000010000ffffull},
                                                               {"all ones", ~0ull}};
  for (const auto& [handle_name, handle] : bad) {
    for (const auto& [call_name, call] : calls) {
      EXPECT_EQ(call(handle), WC_RESULT_ERROR_INVALID_HANDLE)
          << call_name << " with " << handle_name;
    }
  }
  EXPECT_NE(last_error().find("session handle"), std::string::npos) << last_error();
  // The live session was not disturbed.
  EXPECT_EQ(wc_session_step(live.get(), 0), WC_RESULT_OK);

  // Runtime calls with a session handle, a null or a destroyed runtime.
  wc_runtime stale_runtime = WC_NULL_HANDLE;
  const wc_runtime_desc rdesc = runtime_desc();
  ASSERT_EQ(wc_runtime_create(&rdesc, &stale_runtime), WC_RESULT_OK);
  ASSERT_EQ(wc_runtime_destroy(stale_runtime), WC_RESULT_OK);
  for (wc_runtime handle : {wc_runtime{WC_NULL_HANDLE}, wc_runtime{live.get()}, stale_runtime}) {
    wc_session session = 7;
    EXPECT_EQ(wc_session_create(handle, &desc, &session), WC_RESULT_ERROR_INVALID_HANDLE);
    EXPECT_EQ(session, WC_NULL_HANDLE);
    EXPECT_EQ(wc_runtime_destroy(handle), WC_RESULT_ERROR_INVALID_HANDLE);
    const char* names[4];
    uint32_t count = 0;
    EXPECT_EQ(wc_runtime_vulkan_device_extensions(handle, names, 4, &count),
              WC_RESULT_ERROR_INVALID_HANDLE);
  }
}

TEST(PluginHandles, DestroyingARuntimeInvalidatesItsSessions) {
  wc_runtime runtime = WC_NULL_HANDLE;
  const wc_runtime_desc rdesc = runtime_desc();
  ASSERT_EQ(wc_runtime_create(&rdesc, &runtime), WC_RESULT_OK);
  Runtime other;
  const wc_session_desc desc = game_desc();
  wc_session mine = WC_NULL_HANDLE, theirs = WC_NULL_HANDLE;
  ASSERT_EQ(wc_session_create(runtime, &desc, &mine), WC_RESULT_OK);
  ASSERT_EQ(wc_session_create(other.get(), &desc, &theirs), WC_RESULT_OK);
  ASSERT_EQ(wc_runtime_destroy(runtime), WC_RESULT_OK);
  EXPECT_EQ(wc_session_step(mine, 0), WC_RESULT_ERROR_INVALID_HANDLE);
  EXPECT_EQ(wc_session_destroy(mine), WC_RESULT_ERROR_INVALID_HANDLE);
  EXPECT_EQ(wc_session_step(theirs, 0), WC_RESULT_OK);
  EXPECT_EQ(wc_session_destroy(theirs), WC_RESULT_OK);
}

TEST(PluginSessionCreate, RejectsBadDescriptorsAndFiles) {
  Runtime runtime;
  wc_session session = 9;
  const auto create = [&](const wc_session_desc& desc) {
    return wc_session_create(runtime.get(), &desc, &session);
  };
  EXPECT_EQ(wc_session_create(runtime.get(), nullptr, &session), WC_RESULT_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(session, WC_NULL_HANDLE);
  wc_session_desc desc = game_desc();
  EXPECT_EQ(wc_session_create(runtime.get(), &desc, nullptr), WC_RESULT_ERROR_INVALID_ARGUMENT);
  desc.struct_size = 4;
  EXPECT_EQ(create(desc), WC_RESULT_ERROR_VERSION_MISMATCH);
  desc = game_desc();
  desc.source = 9;
  EXPECT_EQ(create(desc), WC_RESULT_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(create(game_desc(1, 3, 3)), WC_RESULT_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(create(game_desc(1, -5, 128)), WC_RESULT_ERROR_INVALID_ARGUMENT);

  // Model: no config without weights, missing files, corrupt config and checkpoint.
  desc = model_desc();
  desc.config = nullptr;
  EXPECT_EQ(create(desc), WC_RESULT_ERROR_INVALID_ARGUMENT);
  EXPECT_NE(last_error().find("config is required"), std::string::npos) << last_error();

  desc = model_desc();
  desc.weights = "/nonexistent/worldcast-weights";
  EXPECT_EQ(create(desc), WC_RESULT_ERROR_BAD_CHECKPOINT);
  EXPECT_NE(last_error().find("/nonexistent/worldcast-weights"), std::string::npos) << last_error();

  desc = model_desc();
  desc.config = "/nonexistent/config.json";
  EXPECT_EQ(create(desc), WC_RESULT_ERROR_BAD_CHECKPOINT);
  EXPECT_NE(last_error().find("/nonexistent/config.json"), std::string::npos) << last_error();

  const fs::path dir = temp_dir("corrupt");
  write_file(dir / "broken.json", "{\"name\": \"game-small\", ");
  desc = model_desc();
  const std::string broken = (dir / "broken.json").string();
  desc.config = broken.c_str();
  EXPECT_EQ(create(desc), WC_RESULT_ERROR_BAD_CHECKPOINT);
  EXPECT_NE(last_error().find("broken.json"), std::string::npos) << last_error();

  // A weights folder with a valid config.json and a garbage shard.
  const fs::path weights = dir / "weights";
  fs::create_directories(weights);
  fs::copy_file(WC_TEST_GAME_SMALL_CONFIG, weights / "config.json");
  write_file(weights / "model.safetensors",
             std::string("\x10\x00\x00\x00\x00\x00\x00\x00{not json}", 18));
  desc = model_desc();
  desc.config = nullptr;
  const std::string weights_text = weights.string();
  desc.weights = weights_text.c_str();
  EXPECT_EQ(create(desc), WC_RESULT_ERROR_BAD_CHECKPOINT);
  EXPECT_NE(last_error().find("model.safetensors"), std::string::npos) << last_error();

  // Policy and settings.
  EXPECT_EQ(create(model_desc("no-such-policy")), WC_RESULT_ERROR_INVALID_ARGUMENT);
  EXPECT_NE(last_error().find("known:"), std::string::npos) << last_error();
  EXPECT_EQ(create(model_desc("dense", "{\"window\": ")), WC_RESULT_ERROR_INVALID_ARGUMENT);
  EXPECT_NE(last_error().find("not valid JSON"), std::string::npos) << last_error();
  EXPECT_EQ(create(model_desc("dense", "[1, 2]")), WC_RESULT_ERROR_INVALID_ARGUMENT);
  // Note [Checked JSON]: a key given twice and a number beyond double's range, by field.
  EXPECT_EQ(create(model_desc("dense", "{\"window\": 2, \"window\": 3}")),
            WC_RESULT_ERROR_INVALID_ARGUMENT);
  EXPECT_NE(last_error().find("field 'window': given twice"), std::string::npos) << last_error();
  EXPECT_EQ(create(model_desc("dense", "{\"window\": 1e400}")), WC_RESULT_ERROR_INVALID_ARGUMENT);
  EXPECT_NE(last_error().find("field 'window'"), std::string::npos) << last_error();
  EXPECT_EQ(create(model_desc("dense", "{\"no_such_key\": 1}")), WC_RESULT_ERROR_INVALID_ARGUMENT);
  EXPECT_NE(last_error().find("no_such_key"), std::string::npos) << last_error();
  desc = model_desc();
  desc.resolution = "8k";
  EXPECT_EQ(create(desc), WC_RESULT_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(session, WC_NULL_HANDLE);
}

TEST(PluginFrames, CpuCopiesAndTheirErrors) {
  Runtime runtime;
  Session session(runtime.get(), game_desc(4));
  wc_session_info info{};
  info.struct_size = sizeof(info);
  ASSERT_EQ(wc_session_get_info(session.get(), &info), WC_RESULT_OK);
  EXPECT_EQ(info.width, 128);
  EXPECT_EQ(info.height, 128);
  EXPECT_EQ(info.source, WC_SOURCE_GAME);
  EXPECT_EQ(info.num_actions, 5);
  info.struct_size = 3;
  EXPECT_EQ(wc_session_get_info(session.get(), &info), WC_RESULT_ERROR_VERSION_MISMATCH);

  uint64_t index = 99;
  const std::vector<uint8_t> first = cpu_frame(session.get(), 128, 128, &index);
  EXPECT_EQ(index, 0u) << "the first frame exists before any step";

  // A padded row pitch puts the same rows further apart.
  const uint32_t pitch = 128 * 4 + 64;
  std::vector<uint8_t> padded(pitch * 128, 0xab);
  wc_frame_request request = cpu_request(padded);
  request.cpu_row_pitch = pitch;
  wc_frame frame = empty_frame();
  ASSERT_EQ(wc_session_get_frame(session.get(), &request, &frame), WC_RESULT_OK);
  EXPECT_EQ(frame.row_pitch, pitch);
  for (int y = 0; y < 128; ++y) {
    ASSERT_TRUE(std::equal(first.begin() + y * 512, first.begin() + (y + 1) * 512,
                           padded.begin() + y * pitch));
    ASSERT_EQ(padded[y * pitch + 512], 0xab) << "the padding is not written";
  }

  std::vector<uint8_t> small(128 * 128 * 4 - 1);
  request = cpu_request(small);
  EXPECT_EQ(wc_session_get_frame(session.get(), &request, &frame),
            WC_RESULT_ERROR_BUFFER_TOO_SMALL);
  EXPECT_NE(session_error(session.get()).find("cpu_capacity"), std::string::npos);
  request = cpu_request(padded);
  request.cpu_pixels = nullptr;
  EXPECT_EQ(wc_session_get_frame(session.get(), &request, &frame),
            WC_RESULT_ERROR_INVALID_ARGUMENT);
  request = cpu_request(padded);
  request.cpu_row_pitch = 100;
  EXPECT_EQ(wc_session_get_frame(session.get(), &request, &frame),
            WC_RESULT_ERROR_INVALID_ARGUMENT);
  request = cpu_request(padded);
  request.kind = 77;
  EXPECT_EQ(wc_session_get_frame(session.get(), &request, &frame),
            WC_RESULT_ERROR_INVALID_ARGUMENT);
  request = cpu_request(padded);
  request.struct_size = 8;
  EXPECT_EQ(wc_session_get_frame(session.get(), &request, &frame),
            WC_RESULT_ERROR_VERSION_MISMATCH);
  request = cpu_request(padded);
  frame.struct_size = 16;
  EXPECT_EQ(wc_session_get_frame(session.get(), &request, &frame),
            WC_RESULT_ERROR_VERSION_MISMATCH);
  frame = empty_frame();
  EXPECT_EQ(wc_session_get_frame(session.get(), nullptr, &frame), WC_RESULT_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(wc_session_get_frame(session.get(), &request, nullptr),
            WC_RESULT_ERROR_INVALID_ARGUMENT);
  request.kind = WC_FRAME_KIND_CUDA;
  const wc_result cuda = wc_session_get_frame(session.get(), &request, &frame);
  EXPECT_EQ(cuda, WC_RESULT_ERROR_UNSUPPORTED) << "the runtime is on the CPU";
  // CPU copies hold no slot: there is nothing to release.
  EXPECT_EQ(wc_session_release_frame(session.get(), 0), WC_RESULT_ERROR_INVALID_HANDLE);
  EXPECT_EQ(wc_session_release_frame(session.get(), 0x10001), WC_RESULT_ERROR_INVALID_HANDLE);
}

TEST(PluginFrames, SkippedFramesAreReportedAsDropped) {
  Runtime runtime;
  Session session(runtime.get(), game_desc(2));
  std::vector<uint8_t> pixels(128 * 128 * 4);
  const wc_frame_request request = cpu_request(pixels);
  wc_frame frame = empty_frame();
  EXPECT_EQ(wc_session_get_frame(session.get(), &request, &frame), WC_RESULT_OK);
  step(session.get(), WC_ACTION_NONE);
  EXPECT_EQ(wc_session_get_frame(session.get(), &request, &frame), WC_RESULT_OK);
  step(session.get(), WC_ACTION_NONE);
  step(session.get(), WC_ACTION_NONE);
  step(session.get(), WC_ACTION_NONE);
  EXPECT_EQ(wc_session_get_frame(session.get(), &request, &frame), WC_RESULT_FRAME_DROPPED);
  EXPECT_EQ(frame.frame_index, 4u);
  EXPECT_EQ(wc_session_get_frame(session.get(), &request, &frame), WC_RESULT_OK);
  wc_stats stats{};
  stats.struct_size = sizeof(stats);
  ASSERT_EQ(wc_session_get_stats(session.get(), &stats), WC_RESULT_OK);
  EXPECT_EQ(stats.frames_dropped, 2u);
  EXPECT_EQ(stats.frame_index, 4u);
  // After a reset, the first get is not a drop.
  ASSERT_EQ(wc_session_reset(session.get(), 2), WC_RESULT_OK);
  EXPECT_EQ(wc_session_get_frame(session.get(), &request, &frame), WC_RESULT_OK);
  EXPECT_EQ(frame.frame_index, 0u);
}

TEST(PluginActions, QueueOrderAndValidation) {
  Runtime runtime;
  Session fifo(runtime.get(), game_desc(8));
  Session newest(runtime.get(), game_desc(8));
  Session reference(runtime.get(), game_desc(8));
  EXPECT_EQ(wc_session_push_action(fifo.get(), -1), WC_RESULT_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(wc_session_push_action(fifo.get(), 5), WC_RESULT_ERROR_INVALID_ARGUMENT);
  EXPECT_NE(session_error(fifo.get()).find("0..4"), std::string::npos) << session_error(fifo.get());
  EXPECT_EQ(wc_session_step(fifo.get(), 0x80), WC_RESULT_ERROR_INVALID_ARGUMENT);

  // FIFO: right, right, down are consumed in order by three steps.
  for (int32_t a : {WC_ACTION_RIGHT, WC_ACTION_RIGHT, WC_ACTION_DOWN}) {
    ASSERT_EQ(wc_session_push_action(fifo.get(), a), WC_RESULT_OK);
    ASSERT_EQ(wc_session_push_action(newest.get(), a), WC_RESULT_OK);
  }
  for (int i = 0; i < 3; ++i) ASSERT_EQ(wc_session_step(fifo.get(), 0), WC_RESULT_OK);
  for (int32_t a : {WC_ACTION_RIGHT, WC_ACTION_RIGHT, WC_ACTION_DOWN}) step(reference.get(), a);
  EXPECT_EQ(cpu_frame(fifo.get()), cpu_frame(reference.get()));

  // NEWEST: one step takes "down" and drops the rest; the next step gets none.
  ASSERT_EQ(wc_session_step(newest.get(), WC_STEP_NEWEST_ACTION), WC_RESULT_OK);
  ASSERT_EQ(wc_session_step(newest.get(), WC_STEP_NEWEST_ACTION), WC_RESULT_OK);
  Session expected(runtime.get(), game_desc(8));
  step(expected.get(), WC_ACTION_DOWN);
  step(expected.get(), WC_ACTION_NONE);
  EXPECT_EQ(cpu_frame(newest.get()), cpu_frame(expected.get()));
  EXPECT_NE(cpu_frame(newest.get()), cpu_frame(fifo.get()));
}

TEST(PluginGameSource, ModelOnlyCallsAreUnsupported) {
  Runtime runtime;
  Session session(runtime.get(), game_desc());
  char text[32];
  uint32_t length = 0;
  EXPECT_EQ(wc_session_set_settings(session.get(), "{}"), WC_RESULT_ERROR_UNSUPPORTED);
  EXPECT_EQ(wc_session_get_settings(session.get(), text, 32, &length), WC_RESULT_ERROR_UNSUPPORTED);
  EXPECT_EQ(wc_session_set_play_settings(session.get(), "{}"), WC_RESULT_ERROR_UNSUPPORTED);
  EXPECT_EQ(wc_session_get_play_settings(session.get(), text, 32, &length),
            WC_RESULT_ERROR_UNSUPPORTED);
  EXPECT_EQ(wc_session_set_policy(session.get(), "dense", "{}"), WC_RESULT_ERROR_UNSUPPORTED);
  EXPECT_EQ(wc_session_save_state(session.get(), "/tmp/wc_game.state"),
            WC_RESULT_ERROR_UNSUPPORTED);
  EXPECT_EQ(wc_session_load_state(session.get(), "/tmp/wc_game.state"),
            WC_RESULT_ERROR_UNSUPPORTED);
  EXPECT_NE(session_error(session.get()).find("reference game"), std::string::npos);
}

TEST(PluginErrors, LastErrorIsPerSessionAndPerThread) {
  Runtime runtime;
  Session a(runtime.get(), game_desc());
  Session b(runtime.get(), game_desc());
  EXPECT_EQ(session_error(a.get()), "");
  EXPECT_EQ(wc_session_push_action(a.get(), 99), WC_RESULT_ERROR_INVALID_ARGUMENT);
  EXPECT_NE(session_error(a.get()).find("wc_session_push_action"), std::string::npos);
  EXPECT_EQ(session_error(b.get()), "");
  EXPECT_EQ(last_error(), session_error(a.get()));

  // Two-call idiom: the length, then a truncated copy (INCOMPLETE), then the whole text.
  uint32_t length = 0;
  ASSERT_EQ(wc_session_last_error(a.get(), nullptr, 0, &length), WC_RESULT_OK);
  EXPECT_EQ(length, session_error(a.get()).size() + 1);
  char small[8];
  EXPECT_EQ(wc_session_last_error(a.get(), small, sizeof(small), &length), WC_RESULT_INCOMPLETE);
  EXPECT_EQ(std::string(small), session_error(a.get()).substr(0, 7));
  EXPECT_EQ(wc_session_last_error(a.get(), nullptr, 0, nullptr), WC_RESULT_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(wc_session_last_error(a.get(), nullptr, 5, &length), WC_RESULT_ERROR_INVALID_ARGUMENT);
}

struct LogRecord {
  std::vector<std::pair<int32_t, std::string>> messages;
};

void record_log(void* user_data, int32_t level, const char* message) {
  static_cast<LogRecord*>(user_data)->messages.emplace_back(level, message);
}

TEST(PluginLog, FailuresReachTheRuntimesCallback) {
  LogRecord mine, theirs;
  wc_runtime_desc desc = runtime_desc();
  desc.log = record_log;
  desc.log_level = WC_LOG_WARNING;
  desc.log_user_data = &mine;
  wc_runtime runtime = WC_NULL_HANDLE, other = WC_NULL_HANDLE;
  ASSERT_EQ(wc_runtime_create(&desc, &runtime), WC_RESULT_OK);
  desc.log_user_data = &theirs;
  ASSERT_EQ(wc_runtime_create(&desc, &other), WC_RESULT_OK);
  wc_session session = WC_NULL_HANDLE;
  const wc_session_desc game = game_desc();
  ASSERT_EQ(wc_session_create(runtime, &game, &session), WC_RESULT_OK);
  EXPECT_EQ(wc_session_push_action(session, 42), WC_RESULT_ERROR_INVALID_ARGUMENT);
  ASSERT_FALSE(mine.messages.empty());
  EXPECT_EQ(mine.messages.back().first, WC_LOG_WARNING);
  EXPECT_NE(mine.messages.back().second.find("action 42"), std::string::npos);
  EXPECT_TRUE(theirs.messages.empty()) << "another runtime's session logged to this callback";
  EXPECT_EQ(wc_runtime_destroy(runtime), WC_RESULT_OK);
  EXPECT_EQ(wc_runtime_destroy(other), WC_RESULT_OK);
}

TEST(PluginActionScript, LoadsTheViewersFormat) {
  uint32_t count = 0;
  ASSERT_EQ(wc_action_script_load(WC_TEST_DATA "/walk.actions", nullptr, 0, &count), WC_RESULT_OK);
  ASSERT_EQ(count, 7u);
  std::vector<int32_t> actions(count);
  ASSERT_EQ(wc_action_script_load(WC_TEST_DATA "/walk.actions", actions.data(), count, &count),
            WC_RESULT_OK);
  EXPECT_EQ(actions,
            (std::vector<int32_t>{WC_ACTION_RIGHT, WC_ACTION_RIGHT, WC_ACTION_DOWN, WC_ACTION_LEFT,
                                  WC_ACTION_LEFT, WC_ACTION_UP, WC_ACTION_NONE}));
  std::vector<int32_t> three(3);
  EXPECT_EQ(wc_action_script_load(WC_TEST_DATA "/walk.actions", three.data(), 3, &count),
            WC_RESULT_INCOMPLETE);
  EXPECT_EQ(count, 7u);
  EXPECT_EQ(wc_action_script_load(WC_TEST_DATA "/malformed.actions", nullptr, 0, &count),
            WC_RESULT_ERROR_INVALID_ARGUMENT);
  EXPECT_NE(last_error().find("malformed.actions:2"), std::string::npos) << last_error();
  EXPECT_EQ(wc_action_script_load("/nonexistent.actions", nullptr, 0, &count), WC_RESULT_ERROR_IO);
  EXPECT_EQ(wc_action_script_load(nullptr, nullptr, 0, &count), WC_RESULT_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(wc_action_script_load(WC_TEST_DATA "/walk.actions", nullptr, 0, nullptr),
            WC_RESULT_ERROR_INVALID_ARGUMENT);
}

TEST(PluginThreads, ReadersRunWhileAnotherThreadSteps) {
  // The documented split: a worker steps while a "render thread" pushes actions and polls
  // frames and stats; then a destroy races with calls in flight. No call may fail except with
  // the qualified successes or, after the destroy, INVALID_HANDLE.
  Runtime runtime;
  wc_session session = WC_NULL_HANDLE;
  const wc_session_desc desc = game_desc(3);
  ASSERT_EQ(wc_session_create(runtime.get(), &desc, &session), WC_RESULT_OK);
  std::atomic<bool> stepping{true};
  std::atomic<bool> reading{false};
  std::atomic<int> failures{0};
  std::thread worker([&] {
    // Steps begin once the reader runs: on a loaded machine the 300 steps could otherwise all
    // finish before the reader's first poll.
    while (!reading) std::this_thread::yield();
    for (int i = 0; i < 300; ++i) {
      if (wc_session_step(session, WC_STEP_NEWEST_ACTION) != WC_RESULT_OK) ++failures;
    }
    stepping = false;
  });
  std::vector<uint8_t> pixels(128 * 128 * 4);
  const wc_frame_request request = cpu_request(pixels);
  uint64_t last_index = 0;
  int polls = 0;
  reading = true;
  do {
    wc_frame frame = empty_frame();
    const wc_result got = wc_session_get_frame(session, &request, &frame);
    if (got != WC_RESULT_OK && got != WC_RESULT_FRAME_DROPPED) ++failures;
    if (frame.frame_index < last_index) ++failures;  // frames never go back in time
    last_index = frame.frame_index;
    wc_stats stats{};
    stats.struct_size = sizeof(stats);
    if (wc_session_get_stats(session, &stats) != WC_RESULT_OK) ++failures;
    if (wc_session_push_action(session, polls % 5) != WC_RESULT_OK) ++failures;
    ++polls;
  } while (stepping);
  worker.join();
  EXPECT_EQ(failures.load(), 0);
  EXPECT_GT(polls, 0);
  wc_stats stats{};
  stats.struct_size = sizeof(stats);
  ASSERT_EQ(wc_session_get_stats(session, &stats), WC_RESULT_OK);
  EXPECT_EQ(stats.frame_index, 300u);

  // The racer steps until the destroy on this thread makes its handle stale.
  std::thread racer([&] {
    for (;;) {
      const wc_result r = wc_session_step(session, 0);
      if (r == WC_RESULT_ERROR_INVALID_HANDLE) break;
      if (r != WC_RESULT_OK) ++failures;
    }
  });
  std::this_thread::sleep_for(std::chrono::milliseconds(5));
  EXPECT_EQ(wc_session_destroy(session), WC_RESULT_OK);
  racer.join();
  EXPECT_EQ(failures.load(), 0);
  EXPECT_EQ(wc_session_step(session, 0), WC_RESULT_ERROR_INVALID_HANDLE);
}

}  // namespace
}  // namespace wc::plugin_test
