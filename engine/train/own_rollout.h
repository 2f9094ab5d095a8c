// The history of training clips as the model itself plays them (Note [Own rollout]).
#pragma once

#include <ATen/ATen.h>

#include "engine/model/dit.h"
#include "engine/train/teacher_forcing.h"

namespace wc::train {

// Note [Own rollout]
// Own context (Note [Own context]) shows the model one-step errors: each history frame is a
// prediction made from true frames. At play time the history is a chain, each frame made from the
// model's own earlier frames, and the skip's reference (Note [Previous-frame skip]) passes every
// error on. The plain skip model lost about 1.5 dB a frame that way, though its own context
// training made its one-step predictions sharp (41 dB). With "own_context_source": "rollout" the
// chosen clips' history is played: from the real sink, block by block, each with one Euler step
// from noise at t = 1 under the clip's actions, against the blocks generated before it re-noised
// at the batch's context levels, as the sampler commits them. The model is then trained to reach
// the true frames from that history. The rollout costs one gradient-free forward per block (over
// a growing prefix), and it uses one step whatever the sampler's count, to keep that cost down.

// Note [Deep rollout]
// An 8-frame clip shows the rollout at most 7 frames deep, each history frame a few steps from a
// true sink. At play the window soon holds only frames made from frames made from frames, and
// that is where a model trained on 8-frame clips failed: 86% responsiveness in the first quarter
// of a 64-frame rollout, 28% after it, the misses mostly a view that stopped scrolling (8 seeds).
// A clip with a lead (ClipSpec::lead_frames = L) lets the rollout play the L frames between the
// sink and the run first, with the attention window of play: the sink block and the newest
// blocks, as many context blocks as the clip's last block sees (sink + 6 for 8-frame clips, the
// eval window). So the run's history is what the window holds L + 7 frames into a game. Each
// frame reads its window afresh, where play keeps the keys and values each frame got when it was
// committed, under the window of its own time; the generated frames differ by a few thousandths
// (tiny random model), a cost of the one-forward-per-frame rollout. The
// lead's true frames are never needed, only its actions and positions; so every clip's run
// comes L frames after its sink, including the game-start clips.

// The played history of the clips `rows` ([R] int64 indices into the batch): frames fpb.. of
// each, [R, F − fpb, C, H, W] float32. `noise` is the starting noise of every played frame but
// the sink ([R, L + F − fpb, C, H, W], the lead's first) and `lead_eps` the context noise of the
// lead's frames ([R, L, C, H, W]; the run's comes from the batch); with no lead (L = 0) it may
// be left undefined. No gradients are recorded.
at::Tensor own_rollout(model::CausalDiTImpl& model, const TeacherForcingBatch& batch,
                       const at::Tensor& rows, const at::Tensor& noise,
                       const at::Tensor& lead_eps = at::Tensor());

}  // namespace wc::train
