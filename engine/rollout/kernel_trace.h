// A Chrome-trace recording of the device kernels (and the host ops that launched them) over a
// stretch of work, through LibTorch's Kineto profiler: `worldcast bench model --trace DIR` writes
// one per policy so a block's time can be split by kernel (tools/kernel_table.py sums it).
#pragma once

#include <memory>
#include <string>

namespace wc::rollout {

class KernelTrace {
 public:
  // Whether this build can record traces (LibTorch 2 with CUDA; the Debian CPU LibTorch cannot).
  static bool available();

  KernelTrace();
  ~KernelTrace();
  KernelTrace(const KernelTrace&) = delete;
  KernelTrace& operator=(const KernelTrace&) = delete;

  // Starts recording; throws wc::Error where !available() or a recording is running.
  void start();
  // Stops and writes the trace to `path` (Chrome trace JSON, written to a temporary name and
  // renamed); throws wc::Error naming `path` on failure.
  void stop_and_save(const std::string& path);

 private:
  bool running_ = false;
};

}  // namespace wc::rollout
