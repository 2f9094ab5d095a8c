// `worldcast bench present`: the per-frame cost of presenting a frame that is already on the
// device, for the CUDA path (convert kernel into the imported slot) and the CPU path (decode on
// the device, copy RGBA8 to the host, memcpy into the staging slot, upload) in the same run, from
// synthetic frames of the given sizes (no model needed). Library side of ui/cli/bench_present.cpp.
#pragma once

#include <ATen/ATen.h>

#include <functional>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace wc::ui {

struct FrameSize2D {
  int width = 0;
  int height = 0;
};

struct PresentBenchOptions {
  std::vector<FrameSize2D> sizes;
  int frames = 300;  // timed frames per size and path
  int warmup = 30;
  at::Device device = at::kCPU;  // where the synthetic frames live; cuda:N enables the CUDA path
  at::ScalarType dtype = at::kBFloat16;
  bool validate = false;
};

struct PresentBenchRow {
  std::string path;  // "cuda" or "cpu"
  FrameSize2D size;
  int frames = 0;
  // Producer time: the call that hands the frame over (CPU path: decode + device-to-host copy
  // + memcpy; CUDA path: enqueueing the kernel and the semaphore operations).
  double publish_ms_p50 = 0.0, publish_ms_p99 = 0.0;
  // Presentation cost: from the frame complete on the device to the frame in the sampled image
  // (publish + record + submit + fence).
  double present_ms_p50 = 0.0, present_ms_p99 = 0.0;
  bool device_to_host = false;  // whether this path copies the frame to the host
  bool pixels_match = false;    // the last frame, drawn and read back, equals decode_rgba's bytes
};

struct PresentBenchReport {
  std::string vulkan_device;
  std::string cuda_unavailable;  // why there are no cuda rows ("" when there are)
  std::vector<PresentBenchRow> rows;
};

// Throws wc::Error for bad options; `on_row` sees each row as it is measured.
PresentBenchReport run_present_bench(const PresentBenchOptions& options,
                                     const std::function<void(const PresentBenchRow&)>& on_row);
nlohmann::json present_bench_json(const PresentBenchOptions& options,
                                  const PresentBenchReport& report);

}  // namespace wc::ui
