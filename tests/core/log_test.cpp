#include "engine/core/log.h"

#include <gtest/gtest.h>

#include <vector>

namespace wc {
namespace {

TEST(Log, SinkReceivesMessagesAtOrAboveTheLevel) {
  std::vector<std::pair<LogLevel, std::string>> seen;
  set_log_sink([&](LogLevel level, const std::string& text) { seen.emplace_back(level, text); });
  set_log_level(LogLevel::kWarning);
  log_info("hidden ", 1);
  log_warning("shown ", 2);
  log_error("also ", 3.5);
  set_log_sink({});
  set_log_level(LogLevel::kInfo);
  ASSERT_EQ(seen.size(), 2u);
  EXPECT_EQ(seen[0].second, "shown 2");
  EXPECT_EQ(seen[1].first, LogLevel::kError);
  EXPECT_EQ(seen[1].second, "also 3.5");
}

}  // namespace
}  // namespace wc
