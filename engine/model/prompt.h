// A prompt for a model with cross-attention (ModelConfig::cross_attention): its embeddings read
// from a safetensors file, or drawn at random for benchmarks.
#pragma once

#include <ATen/ATen.h>

#include <cstdint>
#include <string>

#include "engine/model/model_config.h"

namespace wc::model {

// The tensor "prompt" of the safetensors file `path`: [tokens, width] of the config's
// cross-attention, F32, BF16 or F16, every value finite; returned as float32 [tokens, width].
// wc::Error naming the file and what differs (a missing tensor, its shape against the config's,
// a dtype, a NaN), or the config's lack of cross-attention; the file's reads are bounded as every
// checkpoint's are.
at::Tensor read_prompt(const std::string& path, const ModelConfig& config);

// Standard normal embeddings [tokens, width] from `seed` (the benchmarks' prompt).
at::Tensor random_prompt(const ModelConfig& config, uint64_t seed);

}  // namespace wc::model
