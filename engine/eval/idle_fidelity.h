// Idle fidelity: after seeding, no input for N frames (64 by default); PSNR and SSIM of every
// generated frame against the true game frame for the same seed and actions (DESIGN.md §13
// "vs truth"). The game animates water and nothing else while idle, so this measures how well
// the model holds a scene still and keeps its animation.
#pragma once

#include <nlohmann/json.hpp>

#include "engine/eval/eval_options.h"

namespace wc::eval {

// Whole frames (sprite and HUD included: the game draws them too). "psnr_db" is the mean of the
// per-frame PSNRs over frames and seeds; "psnr_by_frame" the per-frame means over seeds.
nlohmann::json eval_idle_fidelity(const EvalOptions& options);

}  // namespace wc::eval
