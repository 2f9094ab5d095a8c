// Stability: one long rollout with player-like random actions (10 000 frames by default) that
// must produce no NaN/inf and whose idle behaviour at the end matches the start within 1 dB.
#pragma once

#include <nlohmann/json.hpp>

#include "engine/eval/eval_options.h"

namespace wc::eval {

// Note [Stability probe]: after thousands of generated frames the true game frames are of no use
// as a reference (the model's world has drifted from the game's, and a Session cannot be
// re-seeded mid-rollout without dropping the history whose effect we want to see). What stays
// truthful is self-consistency: a static scene should stay static. So M idle frames are probed
// right after seeding and again at the end; "idle self-PSNR" is the PSNR of frames 1..M−1 of a
// probe against its frame 0 (pooled MSE, sprite and HUD included, capped at kPsnrCapDb). The
// check is |end − start| <= 1 dB plus no non-finite value in any generated block.
//
// Idle frames are not identical in the game either (water waves animate, more or less depending
// on how much water is on screen), so the reference game's own idle self-PSNR at the start and
// at the end of the same actions is reported as context ("truth_*"). Two more drift signals:
// "detail_ratio" (mean luma gradient magnitude at the end over the start: < 1 means blur, > 1
// noise) and the mean RGB of both probes. Also "idle_psnr_vs_truth_start_db": the start probe
// against the true frames, the one point where the truth is known.
nlohmann::json eval_stability(const EvalOptions& options);

}  // namespace wc::eval
