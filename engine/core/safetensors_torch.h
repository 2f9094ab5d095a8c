// LibTorch side of safetensors I/O: tensor views to at::Tensor and at::Tensor maps to files.
// Kept out of wc_core so torch-free code (game, fuzzing, tools) can read checkpoints.
#pragma once

#include <ATen/ATen.h>

#include <map>
#include <string>
#include <vector>

#include "engine/core/safetensors.h"

namespace wc {

using TensorMap = std::map<std::string, at::Tensor>;

at::ScalarType to_scalar_type(Dtype dtype);
// Throws wc::Error naming `where` for types safetensors cannot hold here (complex, quantized...).
Dtype dtype_from_scalar_type(at::ScalarType type, const std::string& where);

// A contiguous CPU tensor owning a copy of the view's bytes (so unaligned data and the lifetime
// of the mmap are non-issues). BOOL bytes other than 0/1 are rejected, naming file and tensor.
at::Tensor to_tensor(const TensorView& view);
// Every tensor of a checkpoint, copied.
TensorMap load_tensors(const Checkpoint& checkpoint);

// Writers for at::Tensor maps (any device, any layout: each tensor is made a contiguous CPU copy
// first). Same guarantees as the TensorView overloads in safetensors.h.
void write_safetensors(const std::string& path, const TensorMap& tensors,
                       const Metadata& metadata = {});
std::vector<std::string> write_sharded_checkpoint(const std::string& directory,
                                                  const TensorMap& tensors,
                                                  const Metadata& metadata = {},
                                                  const ShardOptions& options = {});

}  // namespace wc
