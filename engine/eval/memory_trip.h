// Memory: walk k steps one way and back; PSNR of each returning frame against the frame the
// model generated at the same camera position on the way out, before the trip turned.
#pragma once

#include <nlohmann/json.hpp>
#include <vector>

#include "engine/eval/eval_options.h"
#include "engine/eval/reference_run.h"

namespace wc::eval {

// Note [Memory trip]: after seeding, one idle block ending on frame O_0, then k frames in direction
// d (O_1..O_k), then k frames back (R_{k-1}..R_0); R_j is compared with O_j, j = 0..k−1. The frame
// O_j was generated 2(k − j) frames before R_j, so the trip fits the attention window when
// 2k <= W − F (W frames including the sink block of F frames); k defaults to the largest such
// value ((W − F) / 2 rounded down to whole blocks, at least one block; 32 when the window is
// unbounded), read from the policy's own
// "window" setting. The direction is the first of right, left, down, up in which the reference
// game can walk k frames without being blocked (a blocked trip would not scroll), else the
// seed is skipped and listed.
//
// The player sprite turns around and the HUD does not scroll, so both are left out of the PSNR.
// The game itself is not static (water waves animate, a crystal walked over stays gone), so the
// same PSNR on the true game's frames ("truth_psnr_db") is the ceiling to read the model's
// number against.
//
// Note [Still trips]
// A model that never scrolls meets its own frames again on the way "back" and scores the PSNR
// cap: a copy of the seed frame scores 100 dB here (and 34 dB of idle fidelity). So every step
// of the trip, out and back, is read by the responsiveness estimator, "trip_scrolled_share" is the
// share of steps that scrolled the way of the key, and the return-trip check counts only when
// the trip scrolled in at least 90% of its steps (the responsiveness target).
nlohmann::json eval_memory(const EvalOptions& options);

// The first of right, left, down and up in which the game can walk `steps` frames from `start`
// and then `steps` back, every one of them a move (a blocked step would not scroll); kNone when
// there is none.
game::Action free_trip_direction(const ReferenceRun& start, int steps);

// A way of `steps` moves from `start` that never stands twice on one place, in runs of `run`
// moves one way (a Session holds one key per block; steps is a multiple of run): depth first,
// straight on while it can, else the first of right, left, down, up that is free. Empty when no
// way is found within a bounded search. Walked back (each move's opposite, last first) it
// returns to `start`: every move back enters ground the player stood on.
std::vector<game::Action> free_trip_path(const ReferenceRun& start, int steps, int run);

// The default k for a window of `window_frames` (0 = unbounded) and blocks of F frames.
int default_memory_steps(int64_t window_frames, int frames_per_block);

}  // namespace wc::eval
