// The ground play has pushed out of view, kept by its place in the model's own world (Note
// [Remembered ground] in engine/model/prediction.h; Note [World memory] here).
#pragma once

#include <ATen/ATen.h>

#include <cstdint>
#include <unordered_map>
#include <vector>

namespace wc::rollout {

// Note [World memory]
// The model's world has coordinates of its own: every frame of the game scrolls by one step of m
// pixels or not at all (Note [One patch per step]), and which step a generated frame took can be
// read off the frames themselves: the move j whose moved previous frame equals the new frame at
// the largest share of pixels, if that share beats "as it is" (palette-snapped frames compare
// exactly; others within half a byte step). The view's top-left corner then moves by that step,
// so the model's world is laid out on a grid of m x m cells, whatever the true game did.
//
// What is written is the ground that left the view: the m-pixel strip of the frame before that
// the step pushed out, at its place in the world. Only pixels that moved with the scroll are
// written: where the new frame kept the old pixel instead (a screen-fixed sprite or HUD, which
// does not scroll), the strip holds no ground, and writing it would bring a copy of the sprite
// back into the world on the return. A cell written again takes the newer ground: memory holds
// the world as the player last saw it. Only the ring just outside the view is ever read back
// (the reference of Note [Remembered ground]).
//
// Memory is bounded: past `max_cells` cells the least recently written quarter is forgotten, so
// a 100 000-frame walk into new ground does not grow without end. Everything follows from the
// frames, so a replayed rollout remembers the same.
//
// Memory can also be short: with `max_age_frames` = T > 0 a cell is forgotten T frames (calls
// to observe) after it was first written, however often it was written since. The model's
// world decays in view (water turns to flickering speckle within a hundred frames, pixels that
// stay while their neighbours scroll leave a lattice of dots), and a memory that keeps every
// cell for good brings that damage back on every return, where a forgetting view repaints it as
// fresh ground: on the 10 000-frame stability run a lasting memory ended as a field of
// flickering dots. Counting from the first write, not the last, bounds how long any damage can
// come back, even on a walk that hovers over the same few cells. Short trips (walk away, come
// back) still find their ground.
class WorldMemory {
 public:
  static constexpr int64_t kDefaultMaxCells = int64_t{1} << 16;

  // Frames of `height` x `width` pixels and `channels` channels in [−1, 1], moves of
  // `move_pixels`; both sizes must be whole numbers of moves. `max_age_frames` 0 keeps cells
  // until `max_cells` forces them out.
  WorldMemory(int height, int width, int channels, int move_pixels,
              int64_t max_cells = kDefaultMaxCells, int64_t max_age_frames = 0);

  // The frame shown before a generated frame and that frame ([C, H, W], float32, CPU): finds the
  // step it took (Note [World memory]), writes the ground the step pushed out of view, and moves
  // the view. Returns the step: 0 for none, else the index of the move (1 up, 2 down, 3 left,
  // 4 right: the moves' order in prediction.h, by where the new pixels come from).
  int observe(const at::Tensor& before, const at::Tensor& after);

  // `frame` ([C, H, W], the view now) in the middle of a [C, H + 2m, W + 2m] float32 tensor, and
  // in the ring around it the ground remembered there, NaN where none is.
  at::Tensor surround(const at::Tensor& frame) const;

  int64_t view_y() const { return view_y_; }  // the view's top-left corner in world pixels
  int64_t view_x() const { return view_x_; }
  int64_t cells() const { return static_cast<int64_t>(cells_.size()); }
  int64_t max_cells() const { return max_cells_; }
  int64_t max_age_frames() const { return max_age_frames_; }

 private:
  struct Cell {
    std::vector<uint8_t> bytes;  // [C, m, m], a pixel's value v stored as round((v + 1) · 127.5)
    std::vector<uint8_t> known;  // [m, m]: 1 where ground was written
    uint64_t written = 0;        // when it was last written (for forgetting)
    uint64_t born = 0;           // the frame it was first written (for max_age_frames)
  };
  bool expired(const Cell& cell) const;
  void forget_expired();
  static uint64_t key(int64_t cell_y, int64_t cell_x);
  Cell& cell_at(int64_t cell_y, int64_t cell_x);
  void forget_oldest();

  int height_, width_, channels_, m_;
  int64_t max_cells_, max_age_frames_;
  uint64_t frame_ = 0;  // calls to observe
  int64_t view_y_ = 0, view_x_ = 0;
  uint64_t clock_ = 0;
  std::unordered_map<uint64_t, Cell> cells_;
};

}  // namespace wc::rollout
