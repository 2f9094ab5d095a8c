// See live_stats.h.
#include "ui/inference/live_stats.h"

#include <utility>

namespace wc::ui {

void StatsMailbox::publish(std::shared_ptr<const LiveStats> stats) {
  std::lock_guard<std::mutex> lock(mutex_);
  latest_.swap(stats);
  // The old snapshot is released after the lock, at the end of this scope's `stats`.
}

std::shared_ptr<const LiveStats> StatsMailbox::latest() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return latest_;
}

}  // namespace wc::ui
