// One training step's input for a token model (Note [Patch tokens]): a clean context stream of
// the clip's tokens and some of its frames again with tokens masked, in one sequence, so each
// masked frame is predicted from clean history as at play time. See Note [Masked training].
#pragma once

#include <ATen/ATen.h>

#include <cstdint>
#include <vector>

#include "engine/model/dit.h"
#include "engine/train/train_specs.h"

namespace wc::train {

// Note [Masked training]
// Play draws a frame by Note [Masked sampling] against the committed tokens of earlier frames,
// so training shows the model exactly that: the clip's frames as context (frame i sees frames
// 0..i), then `noisy_frames` of them again, each with a random share of its tokens replaced by
// the mask (the share drawn through MaskGIT's cosine schedule, t = the share), seeing the
// context of the frames before it and itself. The loss is the cross-entropy of the true token at
// every masked place; the strip the camera's step brought into view (found by the shift of the
// frame before that explains most tokens) weighs `new_ground_weight` times as much, since that
// is where the world is invented. Only a few frames of each clip are masked, so a long context
// costs one stream, not two. The context of a share of clips is corrupted: a share of its tokens
// (the sink frame's never, as play commits it from the game) replaced by tokens from elsewhere
// in the clip, the token form of context noise, so that a wrong patch the model drew does not
// become a pattern it copies. The cells of the screen-fixed sprite and HUD may weigh
// `overlay_weight` times as much: their tokens are the sprite or a digit over whatever ground is
// beneath, each one rare, and a model that prefers the ground lets the player fade.

// Note [Overlay corruption]
// The sprite and the HUD sit on fixed cells of the screen, and every frame's tokens there are
// carried on from the frame before (the pose follows from the key and the pose before it). So one
// wrong draw there (a sprite cell drawn as the ground under it, a half digit) is read as the truth
// by the next frame, and the next: a broken sprite stays broken for the rest of the walk, and any
// perturbation of attention (a policy's cheaper paths, the model's own mistakes at a long window)
// is paid for with every frame after it. Plain context corruption hits the few overlay cells
// rarely and one at a time. With TokenSpec::overlay_corrupt_share, that share of the clips (never
// a played one) has its overlay cells replaced by tokens from elsewhere in the clip in every
// context frame from a random frame on (never the sink), as a break copied on looks; the masked
// frames after it are still scored against the game's whole sprite and HUD, so the model learns
// to draw them again from the key and the sink rather than to copy what the frame before shows.

// Clips whose context holds the model's own draws, over the whole batch: `rows` ([B] bool) are
// those clips, `played` ([B] bool, within rows) the ones the model played whole (Note [Own token
// context]), the others carrying its one-step draws (Note [Drawn context]); `context` ([B, F, h,
// w]) is each clip's context, `targets` what its frames are scored against where `scored` ([B, F,
// h, w] bool). The other rows hold the game's tokens, every place scored.
struct OwnContext {
  at::Tensor rows, played, context, targets, scored;
};

struct TokenBatch {
  model::FrameBatch input;     // tokens [B, F + M, h, w]: the context, then the M masked frames;
                               // head_first_frame = F
  model::MaskedStream stream;  // who attends to whom (Note [Masked stream attention])
  at::Tensor targets;          // [B, M, h·w] int64: the masked frames' true tokens
  at::Tensor weights;          // [B, M, h·w] float32: 0 where shown, else the place's loss weight
  at::Tensor new_ground;       // [B, M, h·w] bool: the scored places of the strip each step
                               // brought into view, outside the overlay cells
  std::vector<int> noisy;      // each masked frame's index in the clip, ascending
};

// A tile model's places (Note [Tile tokens], engine/model/tile_tokenizer.h): `strip` ([B, F, h,
// w] bool) the tiles each frame's window brought in (tile_strip), `scored` ([h, w] bool) the
// places the loss scores, `ground` ([h, w] bool) the ground's places. Corruption then replaces a
// place with one of its own kind: a ground place with a tile from anywhere in the clip, an
// overlay place with what the same place holds in another frame.
struct TilePlaces {
  at::Tensor strip, scored, ground;
};

// The tiles each frame's window brought in ([B, F, grid_h, grid_w] bool over a ground of `rows`
// x `cols` places; frame 0 has none) from the window's top-left tile of each frame (`origins`
// [B, F, 2] int64, x then y): the column or row on the side it moved to, where it moved one tile.
at::Tensor tile_strip(const at::Tensor& origins, int64_t rows, int64_t cols, int64_t grid_h);

// The step shifts and their reading live with the tile quarters that follow them (tile_quarters.h).
using model::kStepShifts;
using model::step_shifts;

// The strip each frame's step brought into view ([B, F, h, w] bool; frame 0 has none): the
// cells whose source under the frame's step_shifts shift lies outside the frame before.
at::Tensor scrolled_in(const at::Tensor& tokens);

// The batch of clips `tokens` ([B, F, h, w] int64 on the training device), their `actions` and
// `positions` ([B, F] int64). Actions are dropped to `dropped_action` with probability
// `action_dropout`. Every draw follows from `seed`. `overlay_cells` ([h, w] bool, optional) are
// the cells spec.overlay_weight and spec.overlay_corrupt_share apply to. With `own`, its rows'
// context is the model's and their masked frames show and score its targets (places not scored
// weigh 0); their context is never corrupted (it holds the model's own mistakes already), but for
// the overlay corruption of the rows it did not play.
TokenBatch make_token_batch(const at::Tensor& tokens, const at::Tensor& actions,
                            const at::Tensor& positions, const TokenSpec& spec, int64_t vocab,
                            double action_dropout, int64_t dropped_action, uint64_t seed,
                            const at::Tensor& overlay_cells = at::Tensor(),
                            const OwnContext* own = nullptr, const TilePlaces* tiles = nullptr);

// Note [Drawn quarters]
// A frame being drawn has no quarters in its first pass: whether its view scrolls is what the
// model decides. The first pass shows the places it is sure of, the view it carried, and with
// them the scroll, so a model config with "drawn_quarters" gives the passes after the first the
// quarters that scroll makes (Note [Quarter tracking], followed from the shown places as a
// committed frame's are from all of them). The strip that scrolls in is then drawn knowing which
// half of a tile it is and which of its places pair into one tile, where RoPE alone cannot tell
// (Note [Tile quarters]). Training shows it both: TokenSpec::drawn_quarters_share of the masked
// frames carry the clip's quarters for them, the others −1, at every mask share.

// The quarters (Note [Tile quarters], dit.h) of a masked stream: the clip's `quarters` ([B, F]
// int64) for its context, then for each of its masked frames (clip indices `noisy`) the clip's
// quarter where `known` ([B, noisy.size()] bool, optional) holds (Note [Drawn quarters]), else −1,
// a scroll play has not yet drawn.
at::Tensor stream_quarters(const at::Tensor& quarters, const std::vector<int>& noisy,
                           const at::Tensor& known = at::Tensor());

// The weighted mean cross-entropy of `logits` ([B, M, N, V]) at `targets` with `weights`, each
// place's distribution over the tokens `allowed` it ([N, V] bool, optional: all).
at::Tensor masked_token_loss(const at::Tensor& logits, const at::Tensor& targets,
                             const at::Tensor& weights, const at::Tensor& allowed = at::Tensor());

}  // namespace wc::train
