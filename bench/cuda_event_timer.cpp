// The GPU bench timer: CUDA events recorded on the current torch stream around each attend()
// call and each policy path; read after one synchronisation per call. Built only with
// WORLDCAST_CUDA (see bench/CMakeLists.txt).
#include <ATen/cuda/CUDAContext.h>
#include <cuda_runtime_api.h>

#include <map>
#include <string>
#include <vector>

#include "bench/bench_timer.h"
#include "engine/core/error.h"

namespace wc::attention {
namespace {

void check(cudaError_t status, const char* what) {
  if (status != cudaSuccess) {
    throw Error("cuda event timer", std::string(what) + ": " + cudaGetErrorString(status));
  }
}

class CudaEventTimer final : public BenchTimer {
 public:
  CudaEventTimer() {
    check(cudaEventCreate(&call_start_), "cudaEventCreate");
    check(cudaEventCreate(&call_stop_), "cudaEventCreate");
  }
  ~CudaEventTimer() override {
    // Destruction must not throw; a failure here only leaks an event.
    cudaEventDestroy(call_start_);
    cudaEventDestroy(call_stop_);
    for (cudaEvent_t event : pool_) cudaEventDestroy(event);
  }
  CudaEventTimer(const CudaEventTimer&) = delete;
  CudaEventTimer& operator=(const CudaEventTimer&) = delete;

  void begin(const std::string& path) override {
    Mark mark{path, next_event(), nullptr};
    record(mark.start);
    open_[path].push_back(marks_.size());
    marks_.push_back(mark);
  }
  void end(const std::string& path) override {
    auto& stack = open_[path];
    if (stack.empty()) throw Error("bench timer", "end('" + path + "') without begin");
    Mark& mark = marks_[stack.back()];
    stack.pop_back();
    mark.stop = next_event();
    record(mark.stop);
  }
  void start_call() override {
    used_ = 0;  // events of the previous call are reused: finish_call() has read them
    marks_.clear();
    open_.clear();
    record(call_start_);
  }
  void stop_call() override { record(call_stop_); }
  CallTiming finish_call() override {
    check(cudaEventSynchronize(call_stop_), "cudaEventSynchronize");
    CallTiming timing;
    timing.total_ms = elapsed(call_start_, call_stop_);
    for (const Mark& mark : marks_) {
      if (mark.stop == nullptr) throw Error("bench timer", "path '" + mark.path + "' never ended");
      timing.paths_ms[mark.path] += elapsed(mark.start, mark.stop);
    }
    return timing;
  }

 private:
  struct Mark {
    std::string path;
    cudaEvent_t start;
    cudaEvent_t stop;
  };

  cudaEvent_t next_event() {
    if (used_ == pool_.size()) {
      cudaEvent_t event = nullptr;
      check(cudaEventCreate(&event), "cudaEventCreate");
      pool_.push_back(event);
    }
    return pool_[used_++];
  }
  static void record(cudaEvent_t event) {
    check(cudaEventRecord(event, at::cuda::getCurrentCUDAStream().stream()), "cudaEventRecord");
  }
  static double elapsed(cudaEvent_t start, cudaEvent_t stop) {
    float ms = 0.0f;
    check(cudaEventElapsedTime(&ms, start, stop), "cudaEventElapsedTime");
    return static_cast<double>(ms);
  }

  cudaEvent_t call_start_ = nullptr;
  cudaEvent_t call_stop_ = nullptr;
  std::vector<cudaEvent_t> pool_;
  size_t used_ = 0;
  std::vector<Mark> marks_;
  std::map<std::string, std::vector<size_t>> open_;
};

}  // namespace

std::unique_ptr<BenchTimer> make_cuda_event_timer() {
  return std::make_unique<CudaEventTimer>();
}

}  // namespace wc::attention
