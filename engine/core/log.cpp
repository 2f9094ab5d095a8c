// Process-wide log sink; thread-safe so the inference and render threads may both log.
#include "engine/core/log.h"

#include <cstdio>
#include <mutex>

#include "engine/core/printable.h"

namespace wc {
namespace {

std::mutex& sink_mutex() {
  static std::mutex mutex;
  return mutex;
}
LogSink& current_sink() {
  static LogSink sink;
  return sink;
}
LogLevel& current_level() {
  static LogLevel level = LogLevel::kInfo;
  return level;
}
const char* level_name(LogLevel level) {
  switch (level) {
    case LogLevel::kDebug:
      return "debug";
    case LogLevel::kInfo:
      return "info";
    case LogLevel::kWarning:
      return "warning";
    case LogLevel::kError:
      return "error";
  }
  return "?";
}

}  // namespace

void set_log_sink(LogSink sink) {
  std::lock_guard<std::mutex> lock(sink_mutex());
  current_sink() = std::move(sink);
}

void set_log_level(LogLevel min_level) {
  std::lock_guard<std::mutex> lock(sink_mutex());
  current_level() = min_level;
}

void log_message(LogLevel level, const std::string& message) {
  std::lock_guard<std::mutex> lock(sink_mutex());
  if (level < current_level()) return;
  if (current_sink()) {
    current_sink()(level, message);
    return;
  }
  const std::string shown = printable_text(message);  // Note [Printable text]
  std::fprintf(stderr, "[worldcast %s] %s\n", level_name(level), shown.c_str());
}

}  // namespace wc
