// What a model will need in memory, estimated from its config before anything is allocated, and
// the refusal when it does not fit (Note [Memory budget]).
#pragma once

#include <ATen/ATen.h>

#include <cstdint>
#include <string>

#include "engine/core/error.h"
#include "engine/model/model_config.h"

namespace wc::model {

// Note [Memory budget]
// A config inside every validated bound can still describe a model no machine holds (hidden
// 65 536 and 1 024 layers is terabytes of weights). Left to the allocator, that ends in a
// 28-line c10 backtrace on the command line, or in the kernel's OOM killer taking the host
// process the plugin lives in. So before a model is built, its needs are estimated from the
// config alone and compared with what is free, and a config that cannot fit is refused at once
// with both figures. The estimate is a floor, not a bound: the weights exactly (every tensor of
// model_tensor_specs, float32 on the host where the model is built and loaded, then the play
// dtype on the device it runs on), the attention cache of the window the policy keeps (its K and
// V, every layer), and the largest transient of one block's forward (the MLP's hidden
// activations, the attention logits where attention is not fused). What the allocator, the
// CUDA context and fragmentation add on top is not counted, so a refusal is certain and a pass
// is not a promise.

// The refusal: a wc::Error the plugin reports as WC_RESULT_ERROR_OUT_OF_MEMORY.
class OutOfMemory : public Error {
 public:
  using Error::Error;
};

struct MemoryNeed {
  int64_t host = 0;    // bytes on the host
  int64_t device = 0;  // bytes on the device (0 when the device is the host)
  std::string detail;  // what makes them up, for the message
};

// Bytes free now: the host's MemAvailable (/proc/meminfo), or what CUDA reports free on a
// device. -1 when it cannot be told (the check then passes).
int64_t available_memory(at::Device device);

// A playing model: weights, a `window_frames`-frame cache (0: one block) and one block's forward
// at `size`, in `dtype` on `device`.
MemoryNeed play_memory(const ModelConfig& config, const FrameSize& size, at::ScalarType dtype,
                       at::Device device, int64_t window_frames);

// A model in training: float32 weights, their gradients, AdamW's two moments and the EMA, and
// one step's activations for `batch` clips of `tokens` tokens each (kept for the backward pass).
MemoryNeed training_memory(const ModelConfig& config, at::Device device, int64_t batch,
                           int64_t tokens);

// Throws OutOfMemory ("WHERE: needs 12.3 GB on cuda:0 (...), 8.1 GB available") when `need`
// exceeds what is free on the host or the device.
void require_memory(const std::string& where, const MemoryNeed& need, at::Device device);

// "12.3 GB", "512 MB", "4 KB".
std::string format_bytes(int64_t bytes);

}  // namespace wc::model
