// See log_forwarding.h.
//
// Note [Log routing]: wc::log has one sink per process, but each runtime has its own callback.
// The library starts no threads, so every message is logged on the thread of some wc_* call;
// that call sets a thread-local target for its duration. Messages outside any call (none today)
// go to the most recently registered runtime, or stderr when none is left.
#include "plugin/src/log_forwarding.h"

#include <algorithm>
#include <cstdio>
#include <mutex>
#include <vector>

#include "engine/core/log.h"

namespace wc::plugin {
namespace {

thread_local const LogTarget* t_current = nullptr;

std::mutex& targets_mutex() {
  static auto* mutex = new std::mutex;  // never destroyed: hosts may log during exit
  return *mutex;
}
std::vector<const LogTarget*>& targets() {
  static auto* list = new std::vector<const LogTarget*>;
  return *list;
}

int32_t to_c_level(LogLevel level) {
  switch (level) {
    case LogLevel::kDebug: return WC_LOG_DEBUG;
    case LogLevel::kInfo: return WC_LOG_INFO;
    case LogLevel::kWarning: return WC_LOG_WARNING;
    case LogLevel::kError: return WC_LOG_ERROR;
  }
  return WC_LOG_ERROR;
}

void deliver(const LogTarget& target, LogLevel level, const std::string& message) {
  const int32_t c_level = to_c_level(level);
  if (c_level < target.min_level) return;
  if (target.log) {
    target.log(target.user_data, c_level, message.c_str());
  } else {
    static const char* const kNames[] = {"debug", "info", "warning", "error"};
    std::fprintf(stderr, "[worldcast %s] %s\n", kNames[c_level], message.c_str());
  }
}

void forward(LogLevel level, const std::string& message) {
  if (t_current) {
    deliver(*t_current, level, message);
    return;
  }
  LogTarget fallback;
  {
    std::lock_guard<std::mutex> lock(targets_mutex());
    if (!targets().empty()) fallback = *targets().back();
  }
  deliver(fallback, level, message);
}

}  // namespace

void register_log_target(const LogTarget* target) {
  // Installed once and for good, outside targets_mutex: forward() runs under the engine's sink
  // lock and then takes targets_mutex, so taking them in the other order could deadlock.
  static std::once_flag installed;
  std::call_once(installed, [] {
    set_log_sink(forward);
    set_log_level(LogLevel::kDebug);  // each target filters by its own level
  });
  std::lock_guard<std::mutex> lock(targets_mutex());
  targets().push_back(target);
}

void unregister_log_target(const LogTarget* target) {
  std::lock_guard<std::mutex> lock(targets_mutex());
  auto& list = targets();
  list.erase(std::remove(list.begin(), list.end(), target), list.end());
}

ScopedLogTarget::ScopedLogTarget(const LogTarget* target) : previous_(t_current) {
  t_current = target;
}
ScopedLogTarget::~ScopedLogTarget() {
  t_current = previous_;
}

}  // namespace wc::plugin
