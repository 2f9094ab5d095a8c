// The CPU bench timer: a steady clock (CPU ATen ops finish before they return), and the choice
// between it and the CUDA event timer.
#include <map>
#include <vector>

#include "bench/bench_timer.h"
#include "engine/core/error.h"
#include "engine/core/timing.h"

namespace wc::attention {
namespace {

class WallClockTimer final : public BenchTimer {
 public:
  void begin(const std::string& path) override { open_[path].push_back(call_.elapsed_ms()); }
  void end(const std::string& path) override {
    auto& stack = open_[path];
    if (stack.empty()) throw Error("bench timer", "end('" + path + "') without begin");
    timing_.paths_ms[path] += call_.elapsed_ms() - stack.back();
    stack.pop_back();
  }
  void start_call() override {
    timing_ = CallTiming{};
    open_.clear();
    call_.restart();
  }
  void stop_call() override { timing_.total_ms = call_.elapsed_ms(); }
  CallTiming finish_call() override { return timing_; }

 private:
  Stopwatch call_;
  CallTiming timing_;
  std::map<std::string, std::vector<double>> open_;
};

}  // namespace

std::unique_ptr<BenchTimer> make_wall_clock_timer() {
  return std::make_unique<WallClockTimer>();
}

#ifndef WORLDCAST_HAS_CUDA
std::unique_ptr<BenchTimer> make_cuda_event_timer() {
  throw Error("bench", "CUDA timing needs a build with WORLDCAST_CUDA=ON (the gpu preset)");
}
#endif

std::unique_ptr<BenchTimer> make_bench_timer(const at::Device& device) {
  if (device.is_cuda()) return make_cuda_event_timer();
  if (!device.is_cpu()) throw Error("bench", "no timer for device " + device.str());
  return make_wall_clock_timer();
}

}  // namespace wc::attention
