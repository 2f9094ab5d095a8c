// Helpers for the plugin tests: descriptors with struct_size set, RAII handles, error text.
#pragma once

#include <gtest/gtest.h>
#include <worldcast/worldcast.h>

#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

namespace wc::plugin_test {

inline std::string last_error() {
  uint32_t length = 0;
  wc_last_error(nullptr, 0, &length);
  std::string text(length, '\0');
  wc_last_error(text.data(), length, &length);
  text.resize(length > 0 ? length - 1 : 0);
  return text;
}

inline std::string session_error(wc_session session) {
  uint32_t length = 0;
  if (wc_session_last_error(session, nullptr, 0, &length) != WC_RESULT_OK) return "<invalid>";
  std::string text(length, '\0');
  wc_session_last_error(session, text.data(), length, &length);
  text.resize(length > 0 ? length - 1 : 0);
  return text;
}

inline wc_runtime_desc runtime_desc(uint32_t flags = 0) {
  wc_runtime_desc desc{};
  desc.struct_size = sizeof(desc);
  desc.abi_version = WC_ABI_VERSION;
  desc.device = WC_DEVICE_CPU;
  desc.flags = flags;
  desc.log_level = WC_LOG_ERROR + 1;  // the tests read errors through wc_last_error
  return desc;
}

inline wc_session_desc game_desc(uint64_t seed = 1, int width = 0, int height = 0) {
  wc_session_desc desc{};
  desc.struct_size = sizeof(desc);
  desc.source = WC_SOURCE_GAME;
  desc.seed = seed;
  desc.width = width;
  desc.height = height;
  return desc;
}

// game-small with random weights (weights_seed 3) on the CPU.
inline wc_session_desc model_desc(const char* policy = "dense", const char* settings = nullptr,
                                  uint64_t seed = 5) {
  wc_session_desc desc{};
  desc.struct_size = sizeof(desc);
  desc.source = WC_SOURCE_MODEL;
  desc.config = WC_TEST_GAME_SMALL_CONFIG;
  desc.weights_seed = 3;
  desc.policy = policy;
  desc.policy_settings = settings;
  desc.seed = seed;
  return desc;
}

class Runtime {
 public:
  explicit Runtime(uint32_t flags = 0) {
    const wc_runtime_desc desc = runtime_desc(flags);
    const wc_result result = wc_runtime_create(&desc, &handle_);
    EXPECT_EQ(result, WC_RESULT_OK) << last_error();
  }
  ~Runtime() {
    if (handle_ != WC_NULL_HANDLE) wc_runtime_destroy(handle_);
  }
  Runtime(const Runtime&) = delete;
  Runtime& operator=(const Runtime&) = delete;
  wc_runtime get() const { return handle_; }

 private:
  wc_runtime handle_ = WC_NULL_HANDLE;
};

class Session {
 public:
  Session(wc_runtime runtime, const wc_session_desc& desc) {
    const wc_result result = wc_session_create(runtime, &desc, &handle_);
    EXPECT_EQ(result, WC_RESULT_OK) << last_error();
  }
  ~Session() {
    if (handle_ != WC_NULL_HANDLE) wc_session_destroy(handle_);
  }
  Session(const Session&) = delete;
  Session& operator=(const Session&) = delete;
  wc_session get() const { return handle_; }

 private:
  wc_session handle_ = WC_NULL_HANDLE;
};

inline wc_frame_request cpu_request(std::vector<uint8_t>& pixels) {
  wc_frame_request request{};
  request.struct_size = sizeof(request);
  request.kind = WC_FRAME_KIND_CPU_RGBA8;
  request.cpu_pixels = pixels.data();
  request.cpu_capacity = pixels.size();
  return request;
}

inline wc_frame empty_frame() {
  wc_frame frame{};
  frame.struct_size = sizeof(frame);
  return frame;
}

// The session's newest frame as tightly packed RGBA8 (fails the test on error).
inline std::vector<uint8_t> cpu_frame(wc_session session, int width = 128, int height = 128,
                                      uint64_t* index = nullptr) {
  std::vector<uint8_t> pixels(static_cast<size_t>(width) * static_cast<size_t>(height) * 4);
  const wc_frame_request request = cpu_request(pixels);
  wc_frame frame = empty_frame();
  const wc_result result = wc_session_get_frame(session, &request, &frame);
  EXPECT_TRUE(WC_SUCCEEDED(result)) << wc_result_string(result) << ": " << session_error(session);
  if (index) *index = frame.frame_index;
  return pixels;
}

inline void step(wc_session session, int32_t action) {
  ASSERT_EQ(wc_session_push_action(session, action), WC_RESULT_OK) << session_error(session);
  ASSERT_EQ(wc_session_step(session, 0), WC_RESULT_OK) << session_error(session);
}

}  // namespace wc::plugin_test
