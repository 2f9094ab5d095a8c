// See memory_budget.h.
#include "engine/model/memory_budget.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <limits>
#include <sstream>

#ifdef WORLDCAST_HAS_CUDA
#include <cuda_runtime_api.h>
#endif

namespace wc::model {
namespace {

// a·b, saturating at the int64 range: a config's sizes multiply out past it long before any
// real model does.
int64_t times(int64_t a, int64_t b) {
  if (a == 0 || b == 0) return 0;
  const int64_t top = std::numeric_limits<int64_t>::max();
  return a > top / b ? top : a * b;
}

int64_t plus(int64_t a, int64_t b) {
  const int64_t top = std::numeric_limits<int64_t>::max();
  return a > top - b ? top : a + b;
}

int64_t spec_count(const ModelConfig& config) {
  int64_t count = 0;
  for (const TensorSpec& spec : model_tensor_specs(config, Dtype::kF32)) {
    int64_t n = 1;
    for (const int64_t d : spec.shape) n = times(n, d);
    count = plus(count, n);
  }
  return count;
}

// Every layer holds the same tensors, so the count is one layer's times the layers plus the
// rest: exact, and at once for a config of a million layers.
int64_t parameter_count(const ModelConfig& config) {
  if (config.layers <= 2) return spec_count(config);
  ModelConfig one = config, two = config;
  one.layers = 1;
  two.layers = 2;
  const int64_t first = spec_count(one), layer = spec_count(two) - first;
  return plus(first, times(layer, config.layers - 1));
}

// The largest transient of one forward over `tokens` queries against `keys` keys, in
// `element` bytes: the MLP's hidden activations and, unfused, the float32 attention logits.
int64_t forward_transient(const ModelConfig& config, int64_t tokens, int64_t keys, int64_t element,
                          bool fused_attention) {
  const int64_t mlp = times(times(tokens, config.mlp), element);
  const int64_t logits =
      fused_attention ? 0 : times(times(times(config.heads, tokens), keys), int64_t{4} * 2);
  // The residual stream, q, k, v and the layer's output alongside.
  const int64_t stream = times(times(tokens, config.hidden), element * 6);
  return plus(std::max(mlp, logits), stream);
}

}  // namespace

std::string format_bytes(int64_t bytes) {
  const double b = static_cast<double>(bytes);
  char text[64];
  if (b >= 1e9) {
    std::snprintf(text, sizeof text, "%.1f GB", b / 1e9);
  } else if (b >= 1e6) {
    std::snprintf(text, sizeof text, "%.0f MB", b / 1e6);
  } else {
    std::snprintf(text, sizeof text, "%.0f KB", std::ceil(b / 1e3));
  }
  return text;
}

int64_t available_memory(at::Device device) {
  if (device.is_cuda()) {
#ifdef WORLDCAST_HAS_CUDA
    int previous = 0;
    if (cudaGetDevice(&previous) != cudaSuccess) return -1;
    const int index = device.has_index() ? device.index() : previous;
    size_t free = 0, total = 0;
    const bool switched = index != previous && cudaSetDevice(index) == cudaSuccess;
    const cudaError_t status = cudaMemGetInfo(&free, &total);
    if (switched) cudaSetDevice(previous);
    if (status != cudaSuccess) {
      cudaGetLastError();  // clear it: the caller's next CUDA call must not see it
      return -1;
    }
    return static_cast<int64_t>(free);
#else
    return -1;
#endif
  }
  std::ifstream meminfo("/proc/meminfo");
  std::string line;
  while (std::getline(meminfo, line)) {
    if (line.rfind("MemAvailable:", 0) != 0) continue;
    std::istringstream in(line.substr(13));
    int64_t kib = -1;
    in >> kib;
    return kib < 0 ? -1 : times(kib, 1024);
  }
  return -1;
}

MemoryNeed play_memory(const ModelConfig& config, const FrameSize& size, at::ScalarType dtype,
                       at::Device device, int64_t window_frames) {
  const int64_t element = static_cast<int64_t>(c10::elementSize(dtype));
  const int64_t params = parameter_count(config);
  const int64_t tokens_per_frame = int64_t{config.grid_h(size)} * config.grid_w(size);
  const int64_t block_tokens = times(tokens_per_frame, config.frames_per_block);
  const int64_t frames = std::max<int64_t>(window_frames, config.frames_per_block);
  const int64_t keys = times(tokens_per_frame, frames);
  const int64_t cache =
      times(times(times(keys, int64_t{2} * config.layers), int64_t{config.heads} * config.head_dim),
            element);
  const bool fused = device.is_cuda();
  const int64_t transient = forward_transient(config, block_tokens, keys, element, fused);
  // The model is built and loaded in float32 on the host, then moved.
  const int64_t built = times(params, 4);
  MemoryNeed need;
  std::ostringstream detail;
  detail << format_bytes(built) << " of weights";
  if (device.is_cpu()) {
    need.host = plus(plus(times(params, element), cache), transient);
    if (dtype != at::kFloat) need.host = plus(need.host, built);
  } else {
    need.host = built;
    need.device = plus(plus(times(params, element), cache), transient);
  }
  detail << ", a " << frames << "-frame cache of " << format_bytes(cache) << ", "
         << format_bytes(transient) << " for a block's forward";
  need.detail = detail.str();
  return need;
}

MemoryNeed training_memory(const ModelConfig& config, at::Device device, int64_t batch,
                           int64_t tokens) {
  const int64_t params = parameter_count(config);
  // Weights, gradients, two moments and the EMA, float32.
  const int64_t state = times(params, 4 * 5);
  // Every layer keeps its inputs and MLP activations for the backward pass (bf16 under
  // autocast on CUDA, float32 on the CPU); attention is fused on CUDA.
  const int64_t element = device.is_cuda() ? 2 : 4;
  const int64_t per_layer =
      times(times(batch, tokens), times(int64_t{8} * config.hidden + 2 * config.mlp, element));
  int64_t activations = times(per_layer, config.layers);
  if (!device.is_cuda()) {
    activations = plus(activations, times(times(times(batch, config.heads), times(tokens, tokens)),
                                          4 * config.layers));
  }
  MemoryNeed need;
  need.detail = format_bytes(state) + " of weights, gradients, moments and EMA, " +
                format_bytes(activations) + " of activations";
  if (device.is_cpu()) {
    need.host = plus(state, activations);
  } else {
    need.host = times(params, 4);
    need.device = plus(state, activations);
  }
  return need;
}

void require_memory(const std::string& where, const MemoryNeed& need, at::Device device) {
  const auto check = [&](int64_t bytes, at::Device on) {
    if (bytes <= 0) return;
    const int64_t free = available_memory(on);
    if (free < 0 || bytes <= free) return;
    throw OutOfMemory(where, "needs " + format_bytes(bytes) + " on " +
                                 (on.is_cpu() ? std::string("the host") : on.str()) + " (" +
                                 need.detail + "), " + format_bytes(free) + " available");
  };
  check(need.host, at::kCPU);
  if (!device.is_cpu()) check(need.device, device);
}

}  // namespace wc::model
