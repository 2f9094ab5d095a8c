// See tile_quarters.h.
#include "engine/model/tile_quarters.h"

#include <c10/core/GradMode.h>

#include <algorithm>
#include <vector>

namespace wc::model {

at::Tensor tile_quarter_rows(int64_t grid_h, int64_t grid_w, const at::Device& device) {
  const auto places = at::TensorOptions().dtype(at::kLong).device(device);
  const at::Tensor q = at::arange(4, places).view({4, 1, 1});
  const at::Tensor rows = at::arange(grid_h, places).view({1, grid_h, 1});
  const at::Tensor columns = at::arange(grid_w, places).view({1, 1, grid_w});
  const at::Tensor quarter =
      (rows + q.div(2, "floor")).remainder(2) * 2 + (columns + q.remainder(2)).remainder(2);
  return quarter.view({4, grid_h * grid_w});
}

at::Tensor shifted_quarter(const at::Tensor& q, int dy, int dx) {
  return (q.div(2, "floor") + dy).remainder(2) * 2 + (q.remainder(2) + dx).remainder(2);
}

at::Tensor step_shifts(const at::Tensor& tokens) {
  const at::NoGradGuard no_grad;
  const int64_t b = tokens.size(0), f = tokens.size(1), h = tokens.size(2), w = tokens.size(3);
  if (f < 2) return at::zeros({b, 0}, tokens.options().dtype(at::kLong));
  const at::Tensor now = tokens.slice(1, 1), before = tokens.slice(1, 0, f - 1);
  std::vector<at::Tensor> matches;
  for (const auto& s : kStepShifts) {
    const int dy = s[0], dx = s[1];
    const at::Tensor a = now.slice(2, std::max(0, -dy), h - std::max(0, dy))
                             .slice(3, std::max(0, -dx), w - std::max(0, dx));
    const at::Tensor c = before.slice(2, std::max(0, dy), h - std::max(0, -dy))
                             .slice(3, std::max(0, dx), w - std::max(0, -dx));
    matches.push_back((a == c).sum({2, 3}));
  }
  // Ties go to the earlier shift: standing still first.
  return std::get<1>(at::stack(matches, -1).max(-1));
}

at::Tensor follow_quarters(const at::Tensor& before, const at::Tensor& before_tokens,
                           const at::Tensor& tokens) {
  const at::NoGradGuard no_grad;
  const int64_t f = tokens.size(1);
  // table[q·5 + s]: quarter q after shift s.
  std::vector<at::Tensor> columns;
  const at::Tensor all = at::arange(4, before.options().dtype(at::kLong));
  for (const auto& s : kStepShifts) columns.push_back(shifted_quarter(all, s[0], s[1]));
  const at::Tensor table = at::stack(columns, 1).reshape({-1});
  const at::Tensor shifts = step_shifts(at::cat({before_tokens.unsqueeze(1), tokens}, 1));
  std::vector<at::Tensor> quarters;
  at::Tensor q = before.to(at::kLong);
  for (int64_t i = 0; i < f; ++i) {
    q = table.index_select(0, q * 5 + shifts.select(1, i)).view_as(q);
    quarters.push_back(q);
  }
  return at::stack(quarters, 1);
}

}  // namespace wc::model
