// Cell geometry and cell-major views; see Note [Spatial cells] in spatial_cells.h.
#include "engine/attention/headcast/spatial_cells.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>

namespace wc::attention {

int nearest_divisor(int n, int target) {
  int best = 1;
  for (int d = 1; d <= n; ++d) {
    if (n % d != 0) continue;
    const int distance = std::abs(d - target);
    const int best_distance = std::abs(best - target);
    if (distance < best_distance || (distance == best_distance && d > best)) best = d;
  }
  return best;
}

CellGrid CellGrid::whole(const BlockGeometry& geometry) {
  CellGrid grid;
  grid.grid_h_ = geometry.grid_h;
  grid.grid_w_ = geometry.grid_w;
  grid.groups_.push_back(CellGroup{0, 1, geometry.grid_h, 0, 1, geometry.grid_w});
  return grid;
}

CellGrid CellGrid::make(const BlockGeometry& geometry, int cell, CellMode mode) {
  CellGrid grid;
  grid.grid_h_ = geometry.grid_h;
  grid.grid_w_ = geometry.grid_w;
  if (mode == CellMode::kDivisor) {
    const int ch = nearest_divisor(geometry.grid_h, cell);
    const int cw = nearest_divisor(geometry.grid_w, cell);
    grid.groups_.push_back(CellGroup{0, geometry.grid_h / ch, ch, 0, geometry.grid_w / cw, cw});
    return grid;
  }
  // Ragged: full cells first, then the remainder strip along each axis. Rounded: round(n / cell)
  // cells along each axis, the remainder spread one token at a time over the first ones.
  struct Span {
    int start, count, edge;
  };
  auto spans = [cell, mode](int n) {
    std::vector<Span> out;
    if (mode == CellMode::kRounded) {
      const int count = std::max(1, static_cast<int>(std::lround(static_cast<double>(n) / cell)));
      const int edge = n / count, larger = n % count;
      if (larger > 0) out.push_back(Span{0, larger, edge + 1});
      out.push_back(Span{larger * (edge + 1), count - larger, edge});
      return out;
    }
    const int edge = std::min(cell, n);
    const int full = n / edge;
    out.push_back(Span{0, full, edge});
    if (n % edge != 0) out.push_back(Span{full * edge, 1, n % edge});
    return out;
  };
  for (const Span& rows : spans(geometry.grid_h)) {
    for (const Span& cols : spans(geometry.grid_w)) {
      grid.groups_.push_back(
          CellGroup{rows.start, rows.count, rows.edge, cols.start, cols.count, cols.edge});
    }
  }
  return grid;
}

bool CellGrid::is_whole() const {
  return groups_.size() == 1 && groups_[0].cell_h == grid_h_ && groups_[0].cell_w == grid_w_;
}

int CellGrid::cell_of(int y, int x) const {
  int base = 0;
  for (const CellGroup& g : groups_) {
    const int r = y - g.row0;
    const int c = x - g.col0;
    if (r >= 0 && r < g.cell_rows * g.cell_h && c >= 0 && c < g.cell_cols * g.cell_w) {
      return base + (r / g.cell_h) * g.cell_cols + c / g.cell_w;
    }
    base += g.cells();
  }
  return -1;
}

at::Tensor CellGrid::cell_view_of_frames(const at::Tensor& x, const CellGroup& g) {
  const int64_t b = x.size(0);
  const int64_t heads = x.size(1);
  const int64_t frames = x.size(2);
  const int64_t d = x.size(5);
  return x.narrow(3, g.row0, int64_t{g.cell_rows} * g.cell_h)
      .narrow(4, g.col0, int64_t{g.cell_cols} * g.cell_w)
      .view({b, heads, frames, g.cell_rows, g.cell_h, g.cell_cols, g.cell_w, d})
      .permute({0, 1, 3, 5, 2, 4, 6, 7});
}

at::Tensor CellGrid::cell_view(const at::Tensor& x, int frames, const CellGroup& group) const {
  const at::Tensor grid = x.view({x.size(0), x.size(1), frames, grid_h_, grid_w_, x.size(3)});
  return cell_view_of_frames(grid, group);
}

}  // namespace wc::attention
