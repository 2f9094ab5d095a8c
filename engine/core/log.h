// Minimal levelled logging with a replaceable sink (the plugin forwards it to the host engine).
#pragma once

#include <functional>
#include <sstream>
#include <string>

namespace wc {

enum class LogLevel { kDebug = 0, kInfo = 1, kWarning = 2, kError = 3 };

using LogSink = std::function<void(LogLevel, const std::string&)>;

// Replaces the process-wide sink; an empty function restores the default (stderr).
void set_log_sink(LogSink sink);
void set_log_level(LogLevel min_level);
void log_message(LogLevel level, const std::string& message);

template <typename... Args>
void log(LogLevel level, const Args&... args) {
  std::ostringstream out;
  (out << ... << args);
  log_message(level, out.str());
}
template <typename... Args>
void log_info(const Args&... args) {
  log(LogLevel::kInfo, args...);
}
template <typename... Args>
void log_warning(const Args&... args) {
  log(LogLevel::kWarning, args...);
}
template <typename... Args>
void log_error(const Args&... args) {
  log(LogLevel::kError, args...);
}

}  // namespace wc
