// Stability: one long rollout with player-like random actions (10 000 frames by default) that
// must produce no NaN/inf and whose idle behaviour at the end matches the start within 1 dB.
// The rollout is a round trip (random actions out, the same path walked back), so in the game
// the end probe sees the scene of the start probe.
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
// on how much water is on screen: one world's self-PSNR ranged from 28 to 32 dB between two
// places), so probing at two different places would fail a perfect model. Hence the round trip:
// the first half of the frames are player-like random actions, the second half walks the moves
// the game made back in reverse, so the true camera ends where it started ("returned_to_start";
// a crystal collected on the way stays gone), padded with a few idle frames so that both probes
// start at the same phase of the waves' 4-frame step (game::kWaveFramesPerPixel; a 6-frame probe
// of one place read 34.9 or 32.4 dB depending on that phase). The reference game's own idle
// self-PSNR at both probes is reported as context ("truth_*"); the model's end scene is whatever it
// generated. Two more drift signals: "detail_ratio" (mean luma gradient magnitude at the end over
// the start: < 1 means blur, > 1 noise), the share of each probe's idle change inside the game's
// screen-fixed overlays ("idle_change_in_overlays_*": the sprite and HUD, which should not change
// at rest), each probe's PSNR
// against the true frames inside the sprite's rectangle ("sprite_psnr_vs_truth_*": the true
// camera is home at the end, and the sprite is screen-fixed, so this one comparison with the
// truth stays fair after thousands of frames) and the mean RGB of both probes. With
// EvalOptions::keep_frame set, both probes are handed over as frames, and so is the rollout's frame
// at each tenth of its length, generated and true. Also "idle_psnr_vs_truth_start_db": the start
// probe against the true frames, the one point where the truth is known.
nlohmann::json eval_stability(const EvalOptions& options);

}  // namespace wc::eval
