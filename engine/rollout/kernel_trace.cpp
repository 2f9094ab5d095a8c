// See kernel_trace.h. Only the CUDA build with LibTorch 2 records: its Kineto API
// (torch/csrc/autograd/profiler_kineto.h) differs in the Debian LibTorch 1.13.
#include "engine/rollout/kernel_trace.h"

#include <torch/version.h>

#include <cstdio>
#include <set>

#include "engine/core/error.h"

#if defined(WORLDCAST_HAS_CUDA) && TORCH_VERSION_MAJOR >= 2
#include <torch/csrc/autograd/profiler_kineto.h>
#include <torch/cuda.h>
#define WORLDCAST_KERNEL_TRACE 1
#endif

namespace wc::rollout {

KernelTrace::KernelTrace() = default;

KernelTrace::~KernelTrace() {
#ifdef WORLDCAST_KERNEL_TRACE
  if (running_) {
    try {
      (void)torch::autograd::profiler::disableProfiler();  // destruction must not throw
    } catch (...) {
    }
  }
#endif
}

#ifdef WORLDCAST_KERNEL_TRACE
namespace {

namespace impl = torch::profiler::impl;

impl::ProfilerConfig trace_config() {
  return impl::ProfilerConfig(impl::ProfilerState::KINETO);
}

const std::set<impl::ActivityType>& trace_activities() {
  static const std::set<impl::ActivityType> activities = {impl::ActivityType::CPU,
                                                          impl::ActivityType::CUDA};
  return activities;
}

}  // namespace

bool KernelTrace::available() {
  return true;
}

void KernelTrace::start() {
  if (running_) throw Error("kernel trace", "start while a trace is recording");
  torch::autograd::profiler::prepareProfiler(trace_config(), trace_activities());
  torch::autograd::profiler::enableProfiler(trace_config(), trace_activities());
  running_ = true;
}

void KernelTrace::stop_and_save(const std::string& path) {
  if (!running_) throw Error("kernel trace", "stop without start");
  torch::cuda::synchronize();
  running_ = false;
  const auto result = torch::autograd::profiler::disableProfiler();
  const std::string temporary = path + ".tmp";
  try {
    result->save(temporary);
  } catch (const std::exception& error) {
    std::remove(temporary.c_str());
    throw Error(path, std::string("cannot write the kernel trace: ") + error.what());
  }
  if (std::rename(temporary.c_str(), path.c_str()) != 0) {
    std::remove(temporary.c_str());
    throw Error(path, "cannot write the kernel trace (rename failed)");
  }
}
#else
bool KernelTrace::available() {
  return false;
}

void KernelTrace::start() {
  throw Error("kernel trace", "this build cannot record kernel traces (needs CUDA and LibTorch 2)");
}

void KernelTrace::stop_and_save(const std::string& path) {
  throw Error(path, "this build cannot record kernel traces (needs CUDA and LibTorch 2)");
}
#endif

}  // namespace wc::rollout
