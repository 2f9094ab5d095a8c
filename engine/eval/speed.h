// Speed: frames per second and frame-time percentiles of each policy (model + device-to-host +
// decode: the wall time of one Session step), after a warm-up past the window and any cast.
#pragma once

#include <nlohmann/json.hpp>

#include "engine/eval/eval_options.h"

namespace wc::eval {

// One row per policy: dense, then options.policies. "fps" = 1000 / mean frame ms. The Session
// synchronises the device after each block, so wall time is true time on CUDA too. With F
// frames per block only every F-th step generates; the percentiles are then over steps.
nlohmann::json eval_speed(const EvalOptions& options);

}  // namespace wc::eval
