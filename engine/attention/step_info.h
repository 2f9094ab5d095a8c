// What a policy is told about the forward pass it serves: which AR block, which denoising step,
// the noise level, the block geometry, and whether this is the clean (committing) pass.
#pragma once

#include <cstdint>
#include <vector>

namespace wc::attention {

// A block is `frames` latent frames of `grid_h x grid_w` tokens each. Token order inside a block is
// frame-major, then row, then column, so a block reshapes to [frames, grid_h, grid_w].
struct BlockGeometry {
  int frames = 1;
  int grid_h = 1;
  int grid_w = 1;

  int tokens_per_frame() const { return grid_h * grid_w; }
  int tokens_per_block() const { return frames * grid_h * grid_w; }
  // The absolute indices of block `block`'s frames, ascending.
  std::vector<int64_t> frames_of_block(int64_t block) const {
    std::vector<int64_t> indices;
    for (int f = 0; f < frames; ++f) indices.push_back(block * frames + f);
    return indices;
  }
};

struct StepInfo {
  int64_t block_index = 0;  // AR block index, 0 for the first block of a rollout
  int denoise_step = 0;     // 0 .. num_denoise_steps-1; the clean pass comes after them
  int num_denoise_steps = 1;
  double noise_level = 1.0;  // flow-matching t in [0, 1]; 1 is pure noise, 0 is clean
  bool clean_pass = false;   // the pass at noise 0 whose K/V get committed
  // commit() does its device half only: its host half ran before (Note [Replayed commit]).
  bool commit_device_only = false;
  // q, k, v (and attend()'s output) hold the heads in the policy's head_order() for the layer,
  // not in the model's order (Note [Head order], attention_policy.h).
  bool heads_grouped = false;
  BlockGeometry geometry;
};

}  // namespace wc::attention
