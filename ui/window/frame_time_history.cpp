// Frame-time ring; see frame_time_history.h.
#include "ui/window/frame_time_history.h"

#include <algorithm>

#include "engine/core/timing.h"

namespace wc::ui {

FrameTimeHistory::FrameTimeHistory(size_t capacity)
    : samples_(std::max<size_t>(capacity, 1), 0.0f) {}

void FrameTimeHistory::push(float milliseconds) {
  samples_[next_] = milliseconds;
  next_ = (next_ + 1) % samples_.size();
  count_ = std::min(count_ + 1, samples_.size());
}

double FrameTimeHistory::percentile(double q) const {
  std::vector<double> values(samples_.begin(), samples_.begin() + static_cast<long>(count_));
  return wc::percentile(std::move(values), q);
}

double FrameTimeHistory::mean() const {
  if (count_ == 0) return 0.0;
  double sum = 0.0;
  for (size_t i = 0; i < count_; ++i) sum += samples_[i];
  return sum / static_cast<double>(count_);
}

float FrameTimeHistory::max() const {
  if (count_ == 0) return 0.0f;
  return *std::max_element(samples_.begin(), samples_.begin() + static_cast<long>(count_));
}

}  // namespace wc::ui
