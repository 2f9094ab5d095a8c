// Random patch books, palettes and frames drawn from them, for the Note [Patch snap] tests (CPU and
// GPU).
#pragma once

#include <ATen/ATen.h>

#include <algorithm>
#include <random>
#include <vector>

#include "engine/model/patch_book.h"

namespace wc::testing {
using model::PatchBook;

// Colours from bytes, as a surveyed palette's are.
inline at::Tensor palette_of_bytes(int colours, std::mt19937& random) {
  std::vector<float> values;
  for (int i = 0; i < 3 * colours; ++i) values.push_back(static_cast<float>(random() % 256));
  return at::tensor(values).view({colours, 3}) / 127.5 - 1.0;
}

// `patches` distinct random patches of `size` on a `grid_w` x `grid_h` grid, about a third bound
// to one or two cells.
inline PatchBook random_book(std::mt19937& random, int size, int grid_w, int grid_h, int colours,
                             int patches) {
  PatchBook book;
  book.size = size;
  book.frame_width = grid_w * size;
  book.frame_height = grid_h * size;
  book.colours = colours;
  const int cells = grid_w * grid_h;
  while (static_cast<int>(book.patches.size()) < patches) {
    std::vector<uint8_t> patch(size * size);
    for (uint8_t& index : patch) index = static_cast<uint8_t>(random() % colours);
    if (std::find(book.patches.begin(), book.patches.end(), patch) != book.patches.end()) continue;
    book.patches.push_back(patch);
    std::vector<int> bound;
    if (random() % 3 == 0) {
      bound.push_back(static_cast<int>(random() % cells));
      const int other = static_cast<int>(random() % cells);
      if (other != bound[0]) bound.push_back(other);
    }
    book.cells.push_back(bound);
  }
  return book;
}

// Frames [n, 3, H, W] whose cells are random book patches (bound or not) with `damage` pixels
// repainted with random palette colours.
inline at::Tensor frames_of_book(const PatchBook& book, const at::Tensor& palette, int n,
                                 int damage, std::mt19937& random) {
  const int s = book.size, gw = book.grid_w(), gh = book.grid_h();
  at::Tensor index = at::zeros({n, gh * s, gw * s}, at::kLong);
  auto ix = index.accessor<int64_t, 3>();
  for (int f = 0; f < n; ++f) {
    for (int r = 0; r < gh; ++r) {
      for (int c = 0; c < gw; ++c) {
        const std::vector<uint8_t>& patch = book.patches[random() % book.patches.size()];
        for (int i = 0; i < s * s; ++i) ix[f][r * s + i / s][c * s + i % s] = patch[i];
        for (int d = 0; d < damage; ++d) {
          const int i = static_cast<int>(random() % (s * s));
          ix[f][r * s + i / s][c * s + i % s] = static_cast<int64_t>(random() % book.colours);
        }
      }
    }
  }
  return palette.index_select(0, index.flatten())
      .view({n, gh * s, gw * s, 3})
      .permute({0, 3, 1, 2});
}

}  // namespace wc::testing
