// Cell geometry of the spatial path: how a frame's [h, w] token grid is cut into non-overlapping
// cells, and the views that lay a [B, H, frames·h·w, D] tensor out cell-major.
#pragma once

#include <ATen/ATen.h>

#include <vector>

#include "engine/attention/headcast/cast_settings.h"
#include "engine/attention/step_info.h"

namespace wc::attention {

// Note [Spatial cells]
// A spatial query attends only to the keys of its own cell in every frame. In "divisor" mode each
// axis uses the divisor of the grid dimension nearest to the requested cell edge (ties to the
// larger), so every cell has the same shape and all cells of all spatial heads go into one
// attention call. In "ragged" mode cells are cell×cell with smaller cells along the bottom and
// right edges; cells of one shape form a rectangular sub-grid (a CellGroup), and each group is one
// call (at most 4: interior, right edge, bottom edge, corner). In "rounded" mode, the paper's
// (HeadCast: "10x10 cells, the boundary remainder rounded"), each axis has round(n / cell) cells
// (at least one) whose edges differ by at most a token, the longer ones first: 45x80 at cell 10
// is 5x8 cells of 9x10, 68x120 is 7x12 cells of 10x10 and 9x10, 30x52 is 3x5 cells of 10x11 and
// 10x10; again at most 4 groups. A whole-grid CellGrid (one cell per
// frame) turns the same machinery into the plain sliding window used by Dense and Global heads.

// A rectangular region of the grid tiled by equal cells.
struct CellGroup {
  int row0 = 0, cell_rows = 1, cell_h = 1;  // region rows [row0, row0 + cell_rows·cell_h)
  int col0 = 0, cell_cols = 1, cell_w = 1;  // region cols [col0, col0 + cell_cols·cell_w)

  int cells() const { return cell_rows * cell_cols; }
  int cell_tokens() const { return cell_h * cell_w; }
};

class CellGrid {
 public:
  CellGrid() = default;
  // One cell covering the whole frame (the plain window layout).
  static CellGrid whole(const BlockGeometry& geometry);
  static CellGrid make(const BlockGeometry& geometry, int cell, CellMode mode);

  const std::vector<CellGroup>& groups() const { return groups_; }
  int grid_h() const { return grid_h_; }
  int grid_w() const { return grid_w_; }
  bool is_whole() const;

  // The cell index (row-major over all groups) of token (y, x); for masks in tests and FLOPs.
  int cell_of(int y, int x) const;

  // x: [B, Hx, frames·h·w, D] -> a view [B, Hx, cell_rows, cell_cols, frames, cell_h, cell_w, D]
  // of `group`'s region (x must be viewable as [B, Hx, frames, h, w, D]).
  at::Tensor cell_view(const at::Tensor& x, int frames, const CellGroup& group) const;
  // The same for a frame-slot layout x: [B, Hx, frames, h, w, D].
  static at::Tensor cell_view_of_frames(const at::Tensor& x, const CellGroup& group);

 private:
  int grid_h_ = 1, grid_w_ = 1;
  std::vector<CellGroup> groups_;
};

// The divisor of n nearest to target (ties to the larger one).
int nearest_divisor(int n, int target);

}  // namespace wc::attention
