// The patches of the training data, for the token model's codebook (`worldcast codebook`): every
// size × size patch of the frame's grid in the clips a training config makes, as palette indices,
// counted with the cells it was seen in; screen-fixed cells found from the counts.
#pragma once

#include <array>
#include <cstdint>
#include <vector>

#include "engine/train/training_clip.h"

namespace wc::train {

inline constexpr int kMaxPatchColours = 64;
inline constexpr int kMaxPatchSide = 32;

// The surveyed patches: square patches of the training frames, as indices into the surveyed
// palette, and the cells of the frame's grid each was seen in when it was seen in few.
struct PatchBook {
  int size = 8;         // a patch's side in pixels; the grid starts at the frame's top-left corner
  int frame_width = 0;  // the frames the survey saw (cells are of their grid)
  int frame_height = 0;
  int colours = 0;  // the palette's size when surveyed: every index is below it
  std::vector<std::vector<uint8_t>> patches;  // size * size palette indices each, row-major
  std::vector<std::vector<int>> cells;        // per patch, row * grid_w + column; empty: anywhere

  int grid_w() const { return frame_width / size; }
  int grid_h() const { return frame_height / size; }
};

struct PatchSurvey {
  PatchBook book;               // the most common patches, most common first
  std::vector<int64_t> counts;  // each book patch's occurrences
  int64_t occurrences = 0;      // patches surveyed (frames × cells)
  int64_t distinct = 0;         // distinct patches among them
  double book_share = 0.0;      // share of the occurrences that are a book patch
  // Cells (row * grid_w + column) found screen-fixed: most of what is seen there is seen in at
  // most kLocalCells cells anywhere (the sprite and the HUD stand still while the world scrolls).
  std::vector<int> fixed_cells;
  int64_t bound_patches = 0;      // book patches bound to the fixed cells they were seen in
  double unmatched_pixels = 0.0;  // share of pixels whose colour is not exactly a palette colour
};

// A patch seen in at most this many cells is local to them; a cell where local patches make up
// more than kFixedShare of the occurrences is screen-fixed.
inline constexpr int kLocalCells = 4;
inline constexpr double kFixedShare = 0.5;

// The patches of `frames` (RGB bytes, frame-major: count × height × width × 3) of `size`-pixel
// cells, as indices of `palette` (each pixel's nearest colour). Keeps the `max_patches` most
// common (ties in the order of their palette indices) seen at least `min_count` times. Throws
// wc::Error for a frame size not a multiple of `size`, or a size or palette the book cannot hold.
PatchSurvey survey_patches(const std::vector<uint8_t>& frames, int count, int width, int height,
                           const std::vector<std::array<uint8_t, 3>>& palette, int size,
                           int max_patches, int min_count);

// survey_patches over the frames of training batches 0 .. batches − 1 of (`spec`, `batch_size`,
// `seed`), the very clips a training run with those settings starts on.
PatchSurvey survey_clip_patches(const ClipSpec& spec, int batch_size, uint64_t seed, int batches,
                                const std::vector<std::array<uint8_t, 3>>& palette, int size,
                                int max_patches, int min_count);

}  // namespace wc::train
