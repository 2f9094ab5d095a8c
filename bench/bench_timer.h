// Timers for `worldcast bench attention`: the whole attend() call plus every path a policy
// brackets with PathScope. CUDA events on the GPU (cuda_event_timer.cpp, built only with
// WORLDCAST_CUDA), a steady clock on the CPU, where ATen work is synchronous.
#pragma once

#include <ATen/ATen.h>

#include <map>
#include <memory>
#include <string>

#include "engine/attention/path_timer.h"

namespace wc::attention {

struct CallTiming {
  double total_ms = 0.0;
  std::map<std::string, double> paths_ms;  // summed over the path's brackets in the call
};

class BenchTimer : public PathTimer {
 public:
  // Brackets one attend() call; finish_call() waits for the device and reads the times.
  virtual void start_call() = 0;
  virtual void stop_call() = 0;
  virtual CallTiming finish_call() = 0;
};

std::unique_ptr<BenchTimer> make_wall_clock_timer();
// CUDA events on the current stream; throws wc::Error in a build without WORLDCAST_CUDA.
std::unique_ptr<BenchTimer> make_cuda_event_timer();
// The right timer for tensors on `device`.
std::unique_ptr<BenchTimer> make_bench_timer(const at::Device& device);

}  // namespace wc::attention
