// Which quarter of its tile each token shows (Note [Tile quarters]): the model's input, the
// quarters a training clip records and the tracking that carries them from frame to frame in play.
#pragma once

#include <ATen/ATen.h>

namespace wc::model {

// Note [Tile quarters]
// The reference game's tiles are 2×2 tokens and its camera moves one token a step, so which
// quarter of its tile a token shows is its place plus the camera's, mod 2: it changes with every
// step the view scrolls. The strip that scrolls in either starts new tiles (free ground) or
// finishes the tiles whose first half the edge shows (ground fixed by that half), and which one
// is written nowhere on flat ground: water's waves and the grass's tufts run across tile edges,
// and RoPE at theta 10 000 turns a radian per token, so no query reads an offset's parity. A
// model that cannot tell starts lakes on either half and draws shores along half tiles.
//
// With "tile_quarters" a learned vector per quarter (row·2 + column) is added to every token of
// a frame whose quarters are known: FrameBatch::quarters gives each frame the quarter q of its
// top-left token, the others following from it (place (r, c) shows quarter
// ((r + q/2) mod 2, (c + q mod 2) mod 2)); −1 marks a frame whose quarters are not known, the
// frame being drawn (its scroll is what the model decides). The quarters are not read off the
// game: the config names the sink frame's (the game starts its player on a tile's centre), and
// each committed frame's follow from the one before it and the shift that frame's tokens made
// (Note [Quarter tracking]), so the model is told only where its own world's grid is.
// A model grown from one without the vectors starts them at zero and first plays exactly as the
// one it grew from; they are read at kTileQuarterScale times their stored value, since AdamW
// moves an element by about the learning rate a step whatever its gradient and a table read at 1×
// grows too slowly in a fine-tune to reach the scale of the token embeddings it is added to.
constexpr double kTileQuarterScale = 8.0;

// The quarter row of each place for each frame quarter q: [4, grid_h·grid_w] int64 on `device`.
at::Tensor tile_quarter_rows(int64_t grid_h, int64_t grid_w, const at::Device& device);

// The quarter of the top-left token after the view shifts by (dy, dx) tokens from quarter `q`
// (any shape, int64).
at::Tensor shifted_quarter(const at::Tensor& q, int dy, int dx);

// The one-token shifts (dy, dx) a step can make, standing still first: a cell (y, x) then shows
// what (y + dy, x + dx) showed the frame before, the camera having moved by (dy, dx).
inline constexpr int kStepShifts[5][2] = {{0, 0}, {-1, 0}, {1, 0}, {0, -1}, {0, 1}};

// For each frame after the first of `tokens` ([B, F, h, w] int64), the index in kStepShifts of
// the shift of the frame before that explains most of its tokens (ties to the earlier shift):
// [B, F − 1] int64.
at::Tensor step_shifts(const at::Tensor& tokens);

// Note [Quarter tracking]
// In play the quarters of a committed frame follow from the frame before it: its quarter moved
// by the shift (kStepShifts) that best explains the new frame's tokens from the old one's, which
// is how far the model's own view scrolled (an unscrolled view, a step into a wall the model
// drew, keeps its quarter). Only the sink frame's comes from elsewhere, the config's
// "tile_quarters" (where the game starts its camera). All of it runs on the device without a
// sync, so a recorded block graph replays it.

// The quarters [B, F] of frames `tokens` ([B, F, h, w] int64) that follow a frame of quarter
// `before` ([B] int64) showing `before_tokens` ([B, h, w] int64).
at::Tensor follow_quarters(const at::Tensor& before, const at::Tensor& before_tokens,
                           const at::Tensor& tokens);

}  // namespace wc::model
