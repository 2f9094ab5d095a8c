// Note [Log routing] with LibTorch's warnings: a TORCH_WARN raised inside a call reaches that
// call's runtime callback as a warning, at its level (none hears nothing and nothing goes to
// stderr), and the thread's own handler is back once the call ends.
#include <gtest/gtest.h>

#include <c10/util/Exception.h>

#include <string>
#include <utility>
#include <vector>

#include "engine/core/log.h"
#include "plugin/src/log_forwarding.h"

namespace wc::plugin {
namespace {

struct Heard {
  std::vector<std::pair<int32_t, std::string>> messages;
};

void hear(void* user_data, int32_t level, const char* message) {
  static_cast<Heard*>(user_data)->messages.emplace_back(level, message);
}

TEST(LogForwarding, TorchWarningsReachTheCallingRuntimeAtItsLevel) {
  Heard warned, silent;
  const LogTarget warnings{hear, &warned, WC_LOG_WARNING};
  const LogTarget none{hear, &silent, WC_LOG_ERROR + 1};
  register_log_target(&warnings);
  register_log_target(&none);
  {
    ScopedLogTarget call(&warnings);
    TORCH_WARN("probe one");
    log_info("below the level");
  }
  ASSERT_EQ(warned.messages.size(), 1u);
  EXPECT_EQ(warned.messages[0].first, WC_LOG_WARNING);
  EXPECT_NE(warned.messages[0].second.find("LibTorch: probe one"), std::string::npos)
      << warned.messages[0].second;
  ::testing::internal::CaptureStderr();
  {
    ScopedLogTarget call(&none);
    TORCH_WARN("probe two");
    log_error("an error nobody asked for");
  }
  EXPECT_EQ(::testing::internal::GetCapturedStderr(), "");
  EXPECT_TRUE(silent.messages.empty());
  EXPECT_EQ(warned.messages.size(), 1u);
  // Outside any call the thread's own handler (LibTorch's: stderr) is back.
  ::testing::internal::CaptureStderr();
  TORCH_WARN("probe three");
  EXPECT_NE(::testing::internal::GetCapturedStderr().find("probe three"), std::string::npos);
  EXPECT_EQ(warned.messages.size(), 1u);
  unregister_log_target(&none);
  unregister_log_target(&warnings);
}

}  // namespace
}  // namespace wc::plugin
