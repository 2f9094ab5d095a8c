// A tiny pixel-space world-model config for eval tests: runs a frame in milliseconds on the CPU.
#pragma once

#include "engine/model/model_config.h"
#include "tests/model/model_test_util.h"

namespace wc::testing {

// The model tests' tiny config with a square frame of `side` pixels in 8×8 patches, no extra
// resolutions and the default sampler shift.
inline model::ModelConfig eval_tiny_config(int side) {
  model::ModelConfig c = tiny_config();
  c.name = "eval-tiny";
  c.frame = {side, side};
  c.resolutions.clear();
  c.patch_h = 8;
  c.patch_w = 8;
  c.sampler.shift = model::SamplerConfig{}.shift;
  return c;
}

}  // namespace wc::testing
