// Fidelity of each attention policy against dense on the same seeds and actions (DESIGN.md §13):
// per-frame PSNR and SSIM of the policy's frames against dense's, and flicker relative to dense.
#pragma once

#include <nlohmann/json.hpp>

#include "engine/eval/eval_options.h"

namespace wc::eval {

// Note [Policy comparison]: every policy runs with the same Session seed (so the same noise) and
// the same player-like actions as dense, with the settings of Note [Eval policy settings]. The
// first `policy_skip` frames (default: window + one block) are left out of PSNR/SSIM: until the
// history first exceeds the window, headcast and combined are dense by construction and would
// add frames of capped PSNR. The mean is over per-frame PSNRs (capped at kPsnrCapDb). Flicker:
// see flicker.h; "flicker_vs_dense" 1 means as much frame-to-frame change as dense. Errors
// compound along an AR rollout, so longer runs give lower numbers for the same policy.
nlohmann::json eval_policies(const EvalOptions& options);

}  // namespace wc::eval
