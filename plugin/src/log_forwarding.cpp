// See log_forwarding.h.
//
// Note [Log routing]: wc::log has one sink per process, but each runtime has its own callback.
// The library starts no threads, so every message is logged on the thread of some wc_* call;
// that call sets a thread-local target for its duration. Messages outside any call (none today)
// go to the most recently registered runtime, or stderr when none is left. LibTorch's warnings
// raised during a call (TORCH_WARN, which would print to stderr) go to that call's runtime as
// warnings: a host that set its callback's level to none hears nothing from the library.
#include "plugin/src/log_forwarding.h"

#include <c10/util/Exception.h>
#include <torch/version.h>

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
    case LogLevel::kDebug:
      return WC_LOG_DEBUG;
    case LogLevel::kInfo:
      return WC_LOG_INFO;
    case LogLevel::kWarning:
      return WC_LOG_WARNING;
    case LogLevel::kError:
      return WC_LOG_ERROR;
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

// LibTorch's warnings into wc::log (and so to the runtime whose call is running). LibTorch keeps
// its warning handler per thread, so each call's ScopedLogTarget installs this one for its
// duration and puts the thread's own back after.
class WarningForwarder final : public c10::WarningHandler {
 public:
#if TORCH_VERSION_MAJOR >= 2
  void process(const c10::Warning& warning) override {
    log_warning("LibTorch: ", warning.msg());
  }
#else
  void process(const c10::SourceLocation& /*where*/, const std::string& message,
               bool /*verbatim*/) override {
    log_warning("LibTorch: ", message);
  }
#endif
};

c10::WarningHandler* forwarder() {
  static auto* handler = new WarningForwarder;  // never destroyed, like the sink
  return handler;
}

#if TORCH_VERSION_MAJOR >= 2
namespace torch_warnings = c10::WarningUtils;
#else
namespace torch_warnings = c10::Warning;
#endif

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

ScopedLogTarget::ScopedLogTarget(const LogTarget* target)
    : previous_(t_current), previous_warnings_(torch_warnings::get_warning_handler()) {
  t_current = target;
  torch_warnings::set_warning_handler(forwarder());
}
ScopedLogTarget::~ScopedLogTarget() {
  t_current = previous_;
  torch_warnings::set_warning_handler(previous_warnings_);
}

}  // namespace wc::plugin
