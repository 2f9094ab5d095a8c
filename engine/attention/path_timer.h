// Per-path timing hooks for the benchmarks: a policy calls begin("global") / end("global") around
// each attention path; the bench tool supplies a timer (CUDA events on GPU, wall clock on CPU).
#pragma once

#include <string>

namespace wc::attention {

class PathTimer {
 public:
  virtual ~PathTimer() = default;
  virtual void begin(const std::string& path) = 0;
  virtual void end(const std::string& path) = 0;
};

// RAII bracket that tolerates a null timer (the common, uninstrumented case).
class PathScope {
 public:
  PathScope(PathTimer* timer, const char* path) : timer_(timer), path_(path) {
    if (timer_) timer_->begin(path_);
  }
  ~PathScope() {
    if (timer_) timer_->end(path_);
  }
  PathScope(const PathScope&) = delete;
  PathScope& operator=(const PathScope&) = delete;

 private:
  PathTimer* timer_;
  const char* path_;
};

}  // namespace wc::attention
