// A tiny pixel-space world-model config for eval tests: runs a frame in milliseconds on the CPU.
#pragma once

#include "engine/model/model_config.h"

namespace wc::testing {

inline model::ModelConfig eval_tiny_config(int side) {
  model::ModelConfig c;
  c.name = "eval-tiny";
  c.channels = 3;
  c.frame = {side, side};
  c.patch_h = 8;
  c.patch_w = 8;
  c.frames_per_block = 1;
  c.hidden = 32;
  c.layers = 2;
  c.heads = 2;
  c.head_dim = 16;
  c.mlp = 64;
  c.num_actions = 5;
  c.freq_dim = 32;
  c.sampler.steps = 2;
  return c;
}

}  // namespace wc::testing
