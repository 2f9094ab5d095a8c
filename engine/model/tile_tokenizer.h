// Frames to tokens of whole tiles and screen-fixed layers, and back, on any device. See Note
// [Tile tokens].
#pragma once

#include <ATen/ATen.h>

#include "engine/model/tile_book.h"

namespace wc::model {

// Note [Tile tokens]
// The game draws a world of whole 16x16 tiles, and its camera moves half a tile per step, so the
// view shows the tile grid at one of four phases (the tile quarter at its top left, Note [Tile
// quarters]). A token per 8x8 patch makes the model pair quarters into tiles itself, and masked
// sampling draws the quarters of one tile half blind of each other: shores and walls come out
// broken across the tile grid. Here a token is a whole tile: the frame's ground is the window of
// (W/16 + 1) x (H/16 + 1) tiles from the one under its top-left pixel, which covers the view at
// any phase, each place one ground entry of the book; a tile keeps its place in the window until
// the window moves by a whole tile, so a scroll of half a tile changes no token. One more row of
// the grid holds what is drawn over the ground: the phase (which of its four the frame shows,
// place 0), then one place per layer of the book (the player's pose, the HUD box, each HUD
// digit) holding one of its images; its other places hold the pad. A frame decodes by drawing
// the window's tiles shifted by the phase and the layers' images over them, so every tile it
// shows is a tile of the game, whole, and a model drawing tokens invents ground one tile at a
// time. The window holds the tiles just beyond the view as well (a column or row the phase
// hides, and the ground under the sprite): the model draws them like any other, and the game's
// own ground window is what training scores them against. Play draws the phase first (Note
// [Masked sampling]'s places drawn first), so the ground drawn after it knows whether the window
// moved.
//
// Encoding a frame of pixels takes its phase (known where the game starts and followed from the
// phase tokens after; guessed as the one that encodes closest when not given). A layer takes the
// image with the most pixels shown in the frame among those whose every pixel is, the
// transparent image where none fits; the ground takes the nearest entry over the pixels the
// frame shows of each tile, with the layers' opaque pixels left out; a tile the frame does not
// show at all is the mask. Distances are sums of squared byte differences in float64, exact at
// any tile side, so an entry of the book encodes to itself.
class TileTokenizer {
 public:
  // The table on `device`.
  TileTokenizer(const TileBook& book, at::Device device);

  const TileBook& book() const { return book_; }
  int64_t vocab() const { return book_.vocab(); }
  int64_t mask_id() const { return book_.vocab(); }
  int grid_h() const { return book_.grid_h(); }
  int grid_w() const { return book_.grid_w(); }

  // frames [B, F, 3, H, W] in [−1, 1] (any floating dtype; the book's frame size), `quarters`
  // [B, F] int64 in [0, 4) or undefined (each frame's closest phase) -> tokens [B, F, grid_h,
  // grid_w] int64. `misses` (optional) receives the count of shown tiles and layers that are no
  // entry exactly (0-dim int64, on the frames' device).
  at::Tensor encode(const at::Tensor& frames, const at::Tensor& quarters,
                    at::Tensor* misses = nullptr) const;
  // The same with the ground taken whole from `ground` ([B, F, 3, rows·T, cols·T] uint8 RGB, the
  // game's ground window of each frame; training's truth for the tiles the view hides).
  at::Tensor encode_with_ground(const at::Tensor& frames, const at::Tensor& quarters,
                                const at::Tensor& ground, at::Tensor* misses = nullptr) const;
  // tokens [B, F, grid_h, grid_w] int64 -> frames [B, F, 3, H, W] in [−1, 1], `dtype`: gathers
  // from the tables. A place holding a token of another kind draws as the first of its own.
  at::Tensor decode(const at::Tensor& tokens, at::ScalarType dtype) const;
  // Each frame's phase ([B, F] int64 in [0, 4)) from its phase place (0 where that holds
  // something else).
  at::Tensor quarters(const at::Tensor& tokens) const;
  // [grid_h·grid_w, vocab] bool: the tokens each place may hold.
  const at::Tensor& allowed() const { return allowed_; }
  // [grid_h, grid_w] bool: the places the loss scores (all but the pads).
  const at::Tensor& scored() const { return scored_; }
  // [grid_h, grid_w] bool: the overlay row's places (the phase and the layers).
  const at::Tensor& overlay() const { return overlay_; }

 private:
  struct Layer {
    at::Tensor colours;  // [n, 3, h·w] float64 byte values
    at::Tensor opaque;   // [n, h·w] bool
    at::Tensor unit;     // [n, 3, h·w] float32 frame values
  };
  // The overlay row ([B·F, grid_w] int64) of byte frames [B·F, 3, H, W] (float64) and the pixels
  // its layers cover ([B·F, H, W] bool); `misses` gets the layers that fit no image.
  at::Tensor encode_layers(const at::Tensor& bytes, const at::Tensor& quarters, at::Tensor& covered,
                           at::Tensor& misses) const;
  // The ground ([B·F, rows, cols] int64) of byte frames with `shown` pixels ([B·F, H, W] bool)
  // at the phase `quarter`, each frame's summed distance ([B·F] float64) and its count of shown
  // tiles that are no entry exactly ([B·F] int64).
  at::Tensor encode_ground(const at::Tensor& bytes, const at::Tensor& shown, int quarter,
                           at::Tensor& distance, at::Tensor& misses) const;
  // Nearest entries of tiles [M, 3·T·T] (float64) over `weight` ([M, T·T] or undefined: all).
  at::Tensor nearest(const at::Tensor& tiles, const at::Tensor& weight, at::Tensor& best) const;

  TileBook book_;
  at::Tensor ground_;       // [G, 3·T·T] float64 byte values, channel-major
  at::Tensor ground_sq_;    // [G, 3·T·T] float64 squares
  at::Tensor ground_unit_;  // [G, 3, T, T] float32 frame values
  std::vector<Layer> layers_;
  at::Tensor crop_index_;  // [4, H·W] int64: window pixel of each frame pixel, per phase
  at::Tensor allowed_, scored_, overlay_;
};

}  // namespace wc::model
