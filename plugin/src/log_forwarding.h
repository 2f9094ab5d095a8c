// Routes the engine's process-wide log (wc::log) to the log callback of the runtime whose
// wc_* call is running on this thread; see Note [Log routing] in log_forwarding.cpp.
#pragma once

#include <cstdint>

#include "worldcast/worldcast.h"

namespace c10 {
class WarningHandler;
}

namespace wc::plugin {

struct LogTarget {
  wc_log_fn log = nullptr;  // nullptr: stderr
  void* user_data = nullptr;
  int32_t min_level = WC_LOG_INFO;
};

// Registers a runtime's target (installs the forwarding sink with the first one). The target
// must stay valid until unregister_log_target.
void register_log_target(const LogTarget* target);
void unregister_log_target(const LogTarget* target);

// Makes `target` this thread's destination for the scope of one wc_* call, LibTorch's warnings
// included.
class ScopedLogTarget {
 public:
  explicit ScopedLogTarget(const LogTarget* target);
  ~ScopedLogTarget();
  ScopedLogTarget(const ScopedLogTarget&) = delete;
  ScopedLogTarget& operator=(const ScopedLogTarget&) = delete;

 private:
  const LogTarget* previous_;
  c10::WarningHandler* previous_warnings_;
};

}  // namespace wc::plugin
