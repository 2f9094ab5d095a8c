// A fixed ring of recent frame times for the panel's plot (ImGui::PlotLines reads it in place
// through its values_offset argument) and its p50/p99.
#pragma once

#include <cstddef>
#include <vector>

namespace wc::ui {

class FrameTimeHistory {
 public:
  explicit FrameTimeHistory(size_t capacity = 240);

  void push(float milliseconds);

  // The ring storage and the index of the oldest sample, as PlotLines wants them.
  const float* data() const { return samples_.data(); }
  int size() const { return static_cast<int>(count_); }
  int offset() const { return count_ < samples_.size() ? 0 : static_cast<int>(next_); }

  // Percentiles and mean over the samples held (0 when empty).
  double percentile(double q) const;
  double mean() const;
  float max() const;

 private:
  std::vector<float> samples_;
  size_t next_ = 0;
  size_t count_ = 0;
};

}  // namespace wc::ui
