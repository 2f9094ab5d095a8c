// The token model's own one-step mistakes as training context (Note [Drawn context]).
#pragma once

#include <ATen/ATen.h>

#include <cstdint>

#include "engine/model/dit.h"

namespace wc::train {

// Note [Drawn context]
// In play each committed frame is the model's draw, so the ground it carries from the frame
// before is carried through its own distribution every step: where that distribution puts a
// little mass on a wrong patch (a shore one cell off, a tree gone to grass), a few places a step
// turn wrong, and the next frame reads them as the truth and copies them on. Measured on a walk
// (Note [Ground flow], engine/eval/ground_flow.h), the bundled weights kept 98.3 % of carried
// ground that is not grass a step, so a quarter of a lake fades as it crosses the view. Plain
// context corruption (Note [Masked training]) puts tokens from elsewhere in the clip at random
// places, which a model tells from its own mistakes at a glance, and it learns nothing of the
// mistakes it makes.
//
// So a share of each batch's clips (TokenSpec::drawn_share) has each context frame after the sink
// replaced, on the ground it carries, by the model's own draw of that frame: one pass with the
// whole frame masked, seeing the game's frames before it, every place drawn from the model's
// distribution at TokenSpec::drawn_temperature. Every frame's mistakes are the ones the model
// makes in one step from the game's context, so a clip holds mistakes of exactly the kind play
// makes, each frame its own. The masked frames are scored against the game's frames: where a
// drawn frame lost a patch the frames before it still show, the model learns to draw it again
// rather than to copy the loss on. The strip each step brought into view keeps the game's
// tokens: a one-pass draw of new ground is drawn place by place, blind to its neighbours, which
// play never commits (Note [Masked sampling]), and the game's target for the ground after it
// would ask the model to erase what it invented (Note [Own token context]).

// `tokens` ([B, F, h, w] int64, the game's frames) with each frame i ≥ 1 of the rows `rows`
// ([B] bool) replaced, where `carried` ([B, F, h, w] bool) holds, by the model's one-pass draw
// of frame i given frames 0..i−1 under `actions`, `positions` and `quarters` ([B, F] int64;
// quarters optional, Note [Tile quarters]) at `temperature`. The draws follow from `seed`.
// Gradient-free. Frame 0 and every other place keep `tokens`.
at::Tensor drawn_context(model::CausalDiTImpl& model, const at::Tensor& tokens,
                         const at::Tensor& actions, const at::Tensor& positions,
                         const at::Tensor& quarters, const at::Tensor& rows,
                         const at::Tensor& carried, double temperature, uint64_t seed);

}  // namespace wc::train
