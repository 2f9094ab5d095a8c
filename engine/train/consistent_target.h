// Targets for clips with the model's own history that ask only what that history can tell
// (Note [Consistent target]).
#pragma once

#include <ATen/ATen.h>

#include <vector>

#include "engine/game/game.h"
#include "engine/train/teacher_forcing.h"

namespace wc::train {

// Note [Consistent target]
// Deep in its own rollout (Note [Deep rollout]) the model's world has drifted from the game's,
// yet the loss asked for the game's frame. Nothing in the history says what that frame holds, so
// the squared error was best served by the mean: after 1 295 steps with a 24-frame lead the model
// followed the keys in 68% of the steps (41% before) while its trees and paths faded to grass
// (docs/models/game-small-moves-deep-rollouts.md). What the history does say is how the view moves:
// the game's camera moved one step (or none) between its frames f − 1 and f, and that move is
// the model's to copy. So for a clip whose history is the model's own, the target of frame f is
// the model's own frame f − 1 moved the way the game's camera moved, and the game's frame only
// where no move explains the pixel: the strip that scrolls in, the screen-fixed overlays (the
// player sprite, which turns and walks, and the HUD), and pixels whose source lay under them.
// The move is read off the true frames: of the five choices of Note [Moved reference] applied
// to true frame f − 1, the one closest to true frame f outside the overlays. Frames whose
// predecessor in the clip is not the game's previous frame (the sink before a walked-away run,
// or before a lead) keep the game's frame. Clips with true history need nothing: there the two
// targets agree wherever the game is a pure scroll.

// Note [Uncovered pixels]
// The rule above takes a pixel from the model's own frame unless its source lay under an overlay
// in that one step. But the model's own frames carry its mistakes: when it fails to erase the
// sprite's moved copy, the copy sits outside the overlay one frame later, and from then on the
// target asks to keep it and scroll it with the world. Long walks show exactly that: columns of
// sprite copies behind the player. So, optionally, a pixel's source is followed back through the
// run's moves, and a pixel whose content was under an overlay at any earlier frame of the run
// (the swept path behind the sprite) reaches for the game's frame too. That is still only what the
// history can tell: the game's world there was in view before the sprite passed over it.

// game::screen_overlays at this frame size, as a [H, W] bool mask (true inside).
at::Tensor overlay_mask(int width, int height);

// The frames to reach for the noisy frames of the clips (frames 1.. F − 1; one frame per block):
// [B, F − 1, C, H, W] float32. `truth` and `history` are [B, F, C, H, W] (the game's frames and
// the history the model saw), `positions` [B, F], `own` [B] bool (the clips whose history is the
// model's own), `overlay` [H, W] bool. `uncovered_from_game`: Note [Uncovered pixels].
at::Tensor consistent_frames(const at::Tensor& truth, const at::Tensor& history,
                             const at::Tensor& positions, const at::Tensor& own,
                             const at::Tensor& overlay, int move_pixels,
                             bool uncovered_from_game = false);

// The batch retargeted at `frames` ([B, F − 1, ...]): the noisy frames are remade from them with
// the batch's own noise, and the velocity target and the clean frames follow.
void use_consistent_target(TeacherForcingBatch& batch, const at::Tensor& frames);

}  // namespace wc::train
