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
// error on. The session-7 skip model lost about 1.5 dB a frame that way, though its own context
// training made its one-step predictions sharp (41 dB). With "own_context_source": "rollout" the
// chosen clips' history is played: from the real sink, block by block, each with one Euler step
// from noise at t = 1 under the clip's actions, against the blocks generated before it re-noised
// at the batch's context levels, as the sampler commits them. The model is then trained to reach
// the true frames from that history. The rollout costs one gradient-free forward per block (over
// a growing prefix), and it uses one step whatever the sampler's count, to keep that cost down.

// The played history of the clips `rows` ([R] int64 indices into the batch): frames fpb.. of
// each, [R, F − fpb, C, H, W] float32, from `noise` (the same shape). No gradients are recorded.
at::Tensor own_rollout(model::CausalDiTImpl& model, const TeacherForcingBatch& batch,
                       const at::Tensor& rows, const at::Tensor& noise);

}  // namespace wc::train
