// The context of a token model's clip as the model itself plays it, and what each of its frames
// should become next in that world (Note [Own token context]).
#pragma once

#include <ATen/ATen.h>

#include <cstdint>
#include <memory>
#include <vector>

#include "engine/model/codebook.h"
#include "engine/model/dit.h"

namespace wc::train {

// Note [Own token context]
// Play commits the seed frames from the game and every later frame from the model's own draws,
// so deep in a walk nearly all of a frame's context is the model's. Training on the game's
// frames alone never shows the model such a context, and a model that has only ever read the
// game's frames misreads its own: at a 32-frame window the bundled weights emptied the world
// (water 4 % of the ground against the game's 17 %) where a 7-frame window kept it.
//
// So a share of each batch's clips (TokenSpec::own_share) is played by the model first: the
// sink frame committed from the game, then every frame drawn by Note [Masked sampling] with the
// model's own passes, temperature, top-p and sureness, under the clip's keys, with a KV cache
// over the whole clip (play_token_clips). That played clip is the context its masked frames are
// predicted from.
//
// The game's frames are then the wrong target: the model's world is its own a few steps off the
// sink, and asking it to draw the game's trees beside its own lake teaches it to erase what it
// drew. The target of frame i is what the game's rule makes of the model's frame i − 1 under the
// game's step (own_token_targets): the camera's one-patch shift (the game's, found from its
// frames as scrolled_in finds it) moves the model's own ground; the strip the step brings into
// view is the game's new ground, kept only where the model's edge beside it is the game's (the
// cell it continues agrees), else unscored; the sprite and HUD cells are the game's where the
// ground under them (the cell and its source) agrees, else unscored. Where the model's frame is
// the game's, this target is the game's frame.
//
// The step is the game's rule read in the model's world (Note [Own walls],
// engine/eval/own_walls.h): the key moves the view one patch unless the model's frame before shows
// a water, wall or tree tile where the player's hitbox would go (OwnStepReader). A first version
// took the game's step instead and so taught the model to walk through the walls it drew: after 150
// steps its own walls held on 43 % of blocked steps at a 32-frame window, where they had held on 80
// %, and the player, standing on its own water, faded. Where the model's step is not the game's,
// the game's frame says nothing of the strip or the overlays, and they are unscored; the game's
// steps still say what became of each patch of ground (the waves).

// Frames 0..seed_frames−1 of `truth` ([B, F, h, w] int64 tokens), then frames seed_frames..F−1
// drawn by the model (Note [Masked sampling], the settings of its config's "tokens"), each under
// its `actions` and `positions` ([B, F] int64), seeing every frame before it. Gradient-free. Every
// draw follows from `seed`. With `quarters` ([B, F] int64, the game's; only the seed frames' are
// read), every committed frame carries its tile quarter as play commits it (Note [Quarter
// tracking]): a seed frame the game's, a drawn one the quarter of the frame before moved by the
// shift its own tokens made; the frame being drawn carries none. `played_quarters`, when given,
// receives them ([B, F] int64; undefined without `quarters`).
at::Tensor play_token_clips(model::CausalDiTImpl& model, const at::Tensor& truth,
                            const at::Tensor& actions, const at::Tensor& positions, int seed_frames,
                            uint64_t seed, const at::Tensor& quarters = at::Tensor(),
                            at::Tensor* played_quarters = nullptr);

// The logits of masked frames against a context committed one frame at a time, as play attends:
// the cache holds every committed frame's keys and values, per layer, for a batch of clips.
class CachedTokenForward {
 public:
  explicit CachedTokenForward(model::CausalDiTImpl& model) : model_(model) {}
  // Logits [B, 1, h·w, vocab] of `frame` ([B, 1, h, w], the mask where masked) at its share
  // masked `t` ([B, 1]), seeing the committed frames and itself. `quarters` ([B, 1] int64, −1 or
  // undefined where unknown) are the frame's tile quarters (Note [Tile quarters]).
  at::Tensor logits(const at::Tensor& frame, const at::Tensor& t, const at::Tensor& actions,
                    const at::Tensor& positions, const at::Tensor& quarters = at::Tensor());
  // Appends `frame` (finished tokens) to the context.
  void commit(const at::Tensor& frame, const at::Tensor& actions, const at::Tensor& positions,
              const at::Tensor& quarters = at::Tensor());
  int64_t frames() const { return frames_; }

 private:
  at::Tensor run(const at::Tensor& frame, const at::Tensor& t, const at::Tensor& actions,
                 const at::Tensor& positions, const at::Tensor& quarters, bool commit);
  model::CausalDiTImpl& model_;
  std::vector<at::Tensor> keys_, values_;  // per layer [B, H, committed tokens, Dh]
  int64_t frames_ = 0;
};

struct OwnTargets {
  at::Tensor tokens;  // [B, F, h, w] int64: each frame's target (frame 0: the truth's)
  at::Tensor scored;  // [B, F, h, w] bool: whether the place is scored
};

// Note [Own token context]'s targets for the clips `own` ([B, F, h, w], the model's play of
// `truth`, frame 0 equal), each frame i ≥ 1 under the step `steps` gives ([B, F − 1] int64, an
// index in kStepShifts). `overlay_cells` ([h, w] bool) are the cells the sprite or the HUD touch.
OwnTargets own_token_targets(const at::Tensor& truth, const at::Tensor& own,
                             const at::Tensor& steps, const at::Tensor& overlay_cells);

// The step the game's rule takes in the model's frames (Note [Own walls]).
class OwnStepReader {
 public:
  // For frames of `width` x `height` pixels made of `book`'s patches.
  OwnStepReader(const model::Codebook& book, int width, int height);
  // For each frame i ≥ 1 of `frames` ([B, F, h, w] tokens) under `actions` ([B, F] int64, the
  // key that made each frame): the index in kStepShifts of the move the key makes from frame
  // i − 1, or 0 (standing) where the key is none or frame i − 1 blocks it. [B, F − 1] int64 on
  // the frames' device.
  at::Tensor steps(const at::Tensor& frames, const at::Tensor& actions) const;

 private:
  struct State;
  std::shared_ptr<const State> state_;
};

}  // namespace wc::train
