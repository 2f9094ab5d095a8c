// The saved-state file of a Session: what reproduces a rollout exactly, in the safetensors layout
// (metadata strings + the action log and block hashes as tensors), validated field by field.
//
// Note [Replaying saved states]
// A state holds the rollout's inputs (seed, seed frames, policy name and settings, action log)
// rather than the policy's caches: replaying them through a fresh policy reproduces every store,
// cast and classification of every policy bit-for-bit on the same device, without a
// serialisation hook in the AttentionPolicy contract. The price is replay time proportional to
// the rollout length; the block hashes turn any divergence (other weights, device, settings
// changed live) into an error instead of a silently different game.
#pragma once

#include <ATen/ATen.h>

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "engine/model/model_config.h"

namespace wc::rollout {

struct SessionState {
  std::string config;
  model::FrameSize resolution;
  int frames_per_block = 1;
  int seed_frames = 0;
  std::string policy;
  nlohmann::json policy_settings = nlohmann::json::object();
  uint64_t seed = 0;
  uint64_t frame_index = 0;
  std::vector<int64_t> actions;        // one per generated frame
  std::vector<uint64_t> block_hashes;  // one per generated block
};

// A block's hash as an int64 scalar on the block's device, computed without a sync; the same
// value on CPU and CUDA for the same float32 bits (Note [Block hash] in session.cpp).
at::Tensor block_hash(const at::Tensor& block);
// The same, read back to the host.
uint64_t hash_block(const at::Tensor& block);

void write_session_state(const std::string& path, const SessionState& state);
// Throws wc::Error "<path>: field '<name>': ..." for missing, malformed or inconsistent fields
// (and the safetensors reader's errors for truncated or corrupt files).
SessionState read_session_state(const std::string& path, int num_actions);

}  // namespace wc::rollout
