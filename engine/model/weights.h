// DiT weights: deterministic random initialisation, and safetensors checkpoints checked against
// the config's tensor spec (missing/extra tensors, shape, dtype, NaN) before anything is copied.
#pragma once

#include <cstdint>
#include <string>

#include "engine/core/safetensors.h"
#include "engine/model/dit.h"

namespace wc::model {

// Fills every parameter from a CPU generator seeded with `seed` (the same values on every
// device): linear weights N(0, 1/fan_in), biases N(0, 0.02²), norm weights 1 + N(0, 0.1²),
// modulation and embeddings N(0, 1/D). Random-weight benchmarks and tests use it; training
// chooses its own initialisation.
void init_random_weights(CausalDiT& model, uint64_t seed);

// Loads a checkpoint (a .safetensors file or a sharded directory) into `model`, converting to
// the model's device and dtype. Throws wc::Error naming the file and tensor on any mismatch with
// model_tensor_specs (all tensors must share one floating dtype: F32, BF16 or F16) or on NaN/inf;
// the model is untouched then.
void load_weights(CausalDiT& model, const std::string& path);

// The checks load_weights makes before it copies anything, for a model of `config`: one floating
// dtype (F32, BF16 or F16) and the tensors of model_tensor_specs (not the values: check_finite).
// Throws wc::Error naming the file and tensor.
void check_weights(const Checkpoint& checkpoint, const ModelConfig& config);

// Writes the model's parameters as a sharded checkpoint (≤ max_shard_bytes per file) in
// `dtype` (F32 / BF16 / F16) into `directory`. The config travels in the metadata.
void save_weights(const CausalDiT& model, const std::string& directory, Dtype dtype = Dtype::kF32,
                  uint64_t max_shard_bytes = 16ull << 20);

}  // namespace wc::model
