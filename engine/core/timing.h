// Wall-clock stopwatches and order statistics for frame-time reporting (never asserted in tests).
#pragma once

#include <algorithm>
#include <chrono>
#include <cmath>
#include <vector>

namespace wc {

class Stopwatch {
 public:
  Stopwatch() : start_(Clock::now()) {}
  void restart() { start_ = Clock::now(); }
  double elapsed_ms() const {
    return std::chrono::duration<double, std::milli>(Clock::now() - start_).count();
  }

 private:
  using Clock = std::chrono::steady_clock;
  Clock::time_point start_;
};

// The q-th percentile (q in [0, 100]) by linear interpolation between order statistics;
// 0 for an empty sample.
inline double percentile(std::vector<double> values, double q) {
  if (values.empty()) return 0.0;
  std::sort(values.begin(), values.end());
  const double rank = std::clamp(q, 0.0, 100.0) / 100.0 * static_cast<double>(values.size() - 1);
  const auto lo = static_cast<size_t>(std::floor(rank));
  const auto hi = std::min(lo + 1, values.size() - 1);
  const double frac = rank - static_cast<double>(lo);
  return values[lo] + (values[hi] - values[lo]) * frac;
}

inline double median(std::vector<double> values) {
  return percentile(std::move(values), 50.0);
}

// The median of values[begin, end).
inline double median_of(const std::vector<double>& values, size_t begin, size_t end) {
  return median(std::vector<double>(values.begin() + static_cast<std::ptrdiff_t>(begin),
                                    values.begin() + static_cast<std::ptrdiff_t>(end)));
}

// DESIGN.md §13 frame-time flatness of per-frame times: the median over frames [n−100, n) divided
// by the median over [100, 200), at the last n; 0 for fewer than 300 frames.
inline double frame_time_flatness(const std::vector<double>& frame_ms) {
  const size_t n = frame_ms.size();
  if (n < 300) return 0.0;
  const double first = median_of(frame_ms, 100, 200);
  return first > 0 ? median_of(frame_ms, n - 100, n) / first : 0.0;
}

// The same ratio at its largest over every n from 300 to the end (§13 reads "for n up to
// 10 000+"): a rollout whose time steps up for a while and back down passes the ratio at its end
// but not this one. 0 for fewer than 300 frames.
inline double frame_time_flatness_worst(const std::vector<double>& frame_ms) {
  const size_t n = frame_ms.size();
  if (n < 300) return 0.0;
  const double first = median_of(frame_ms, 100, 200);
  if (first <= 0) return 0.0;
  double worst = 0.0;
  for (size_t end = 300; end <= n; ++end) {
    worst = std::max(worst, median_of(frame_ms, end - 100, end) / first);
  }
  return worst;
}

}  // namespace wc
