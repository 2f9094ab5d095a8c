// See patch_snap.h.
#include "engine/model/patch_snap.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "engine/core/error.h"

namespace wc::model {
namespace {

// Added to the distance of a patch that may not stand in a cell: above any true distance (at
// most 3·8·8·255² ≈ 1.25·10⁷ bytes² for the largest patch).
constexpr float kBarred = 1e10f;
constexpr int kMaxExactSide = 8;

// Model-space values as bytes centred on 0 (−128 … 127): integers, so that for patches up to
// kMaxExactSide the expanded distance |e|² − 2x·e (within ±3·3·64·128² < 2²⁴) is exact in
// float32 whatever order a matmul sums in, and ranks ties as the reference does.
at::Tensor centred_bytes(const at::Tensor& model_space) {
  return ((model_space.to(at::kFloat) + 1.0f) * 127.5f).round() - 128.0f;
}

// The book's patches as [K, 3·S·S] (channel, row, column) in model space.
at::Tensor book_in_model_space(const PatchBook& book, const at::Tensor& palette) {
  std::vector<int64_t> indices;
  for (const std::vector<uint8_t>& patch : book.patches)
    indices.insert(indices.end(), patch.begin(), patch.end());
  const int64_t k = static_cast<int64_t>(book.patches.size());
  const at::Tensor index = at::tensor(indices, at::kLong).to(palette.device());
  // [K·S·S, 3] → [K, S·S, 3] → [K, 3, S·S]
  return palette.to(at::kFloat)
      .index_select(0, index)
      .view({k, -1, 3})
      .transpose(1, 2)
      .reshape({k, -1});
}

void check_frames(const at::Tensor& frames, int size, int grid_h, int grid_w,
                  const std::string& where) {
  if (frames.dim() < 3 || frames.size(-3) != 3 || frames.size(-2) != int64_t{grid_h} * size ||
      frames.size(-1) != int64_t{grid_w} * size) {
    throw Error(where, "the patch book is of " + std::to_string(grid_w * size) + "x" +
                           std::to_string(grid_h * size) + " RGB frames, not of frames shaped " +
                           c10::str(frames.sizes()));
  }
}

// [..., 3, H, W] → [N·cells, 3·S·S] and back.
at::Tensor to_patches(const at::Tensor& frames, int size, int grid_h, int grid_w) {
  return frames.reshape({-1, 3, grid_h, size, grid_w, size})
      .permute({0, 2, 4, 1, 3, 5})
      .reshape({-1, 3 * size * size});
}
at::Tensor from_patches(const at::Tensor& patches, const at::Tensor& like, int size, int grid_h,
                        int grid_w) {
  return patches.reshape({-1, grid_h, grid_w, 3, size, size})
      .permute({0, 3, 1, 4, 2, 5})
      .reshape(like.sizes());
}

}  // namespace

PatchSnap::PatchSnap(const PatchBook& book, const at::Tensor& palette,
                     const PatchSnapLimits& limits, const at::Device& device,
                     const std::string& where)
    : size_(book.size),
      grid_h_(book.grid_h()),
      grid_w_(book.grid_w()),
      limits_(limits),
      where_(where) {
  if (book.colours > palette.size(0)) {
    throw Error(where, "the patch book has " + std::to_string(book.colours) +
                           " colours, the model's palette " + std::to_string(palette.size(0)));
  }
  if (book.size > kMaxExactSide) {
    throw Error(where, "patches above " + std::to_string(kMaxExactSide) + " × " +
                           std::to_string(kMaxExactSide) + " pixels are not supported");
  }
  entry_model_ = book_in_model_space(book, palette.to(device));
  entry_bytes_ = centred_bytes(entry_model_);
  entry_norms_ = entry_bytes_.square().sum(1);
  const int64_t cells = int64_t{grid_h_} * grid_w_, k = entry_model_.size(0);
  at::Tensor barred = at::zeros({cells, k}, at::kFloat);
  at::Tensor limit = at::full({cells}, limits.max_changed, at::kLong);
  at::Tensor fixed = at::zeros({cells}, at::kBool);
  for (int64_t i = 0; i < k; ++i) {
    if (book.cells[i].empty()) continue;
    barred.select(1, i).fill_(kBarred);
    for (int cell : book.cells[i]) {
      barred[cell][i] = 0.0f;
      limit[cell] = limits.fixed_max_changed;
      fixed[cell] = true;
    }
  }
  barred_ = barred.to(device);
  limit_ = limit.to(device);
  fixed_ = fixed.to(device);
}

at::Tensor PatchSnap::snap(const at::Tensor& frames, const at::Tensor& reference) const {
  check_frames(frames, size_, grid_h_, grid_w_, where_);
  const int64_t cells = int64_t{grid_h_} * grid_w_;
  const at::Tensor patches = to_patches(frames.to(at::kFloat), size_, grid_h_, grid_w_);
  const at::Tensor bytes = centred_bytes(patches);
  // |x − e|² − |x|², per cell with the bar of patches that may not stand there.
  const at::Tensor distance = (entry_norms_.unsqueeze(0) - 2.0f * bytes.matmul(entry_bytes_.t()))
                                  .view({-1, cells, entry_bytes_.size(0)}) +
                              barred_.unsqueeze(0);
  const at::Tensor nearest = distance.argmin(-1).reshape({-1});  // [N·cells]
  const at::Tensor cell = at::arange(cells, nearest.options()).repeat({nearest.size(0) / cells});
  const at::Tensor allowed = barred_.index({cell, nearest}) == 0.0f;
  const int64_t pixels = int64_t{size_} * size_;
  const at::Tensor changed =
      (entry_bytes_.index_select(0, nearest) != bytes).view({-1, 3, pixels}).any(1).sum(1);
  const at::Tensor within = (changed.view({-1, cells}) <= limit_.unsqueeze(0)).reshape({-1});
  const at::Tensor take = allowed.logical_and(within).unsqueeze(1);
  at::Tensor out = at::where(take, entry_model_.index_select(0, nearest), patches);
  if (reference.defined()) {
    check_frames(reference, size_, grid_h_, grid_w_, where_);
    const at::Tensor held = to_patches(reference.to(at::kFloat), size_, grid_h_, grid_w_);
    const at::Tensor held_changed =
        (centred_bytes(held) != bytes).view({-1, 3, pixels}).any(1).sum(1);
    const at::Tensor fixed = fixed_.repeat({nearest.size(0) / cells});
    const at::Tensor world_hold = fixed.logical_not()
                                      .logical_and(allowed)
                                      .logical_and(changed > 0)
                                      .logical_and(held_changed <= limits_.hold);
    at::Tensor hold = world_hold;
    if (limits_.fixed_hold > 0) {
      hold = hold.logical_or(
          fixed.logical_and(allowed).logical_and(held_changed <= changed + limits_.fixed_hold));
    }
    out = at::where(hold.unsqueeze(1), held, out);
  }
  return from_patches(out, frames, size_, grid_h_, grid_w_).to(frames.scalar_type()).contiguous();
}

at::Tensor snap_patches_reference(const at::Tensor& frames, const PatchBook& book,
                                  const at::Tensor& palette, const PatchSnapLimits& limits,
                                  const at::Tensor& reference) {
  const int s = book.size, gh = book.grid_h(), gw = book.grid_w();
  std::vector<bool> fixed(static_cast<size_t>(gh) * gw, false);
  for (const std::vector<int>& bound : book.cells) {
    for (int cell : bound) fixed[cell] = true;
  }
  check_frames(frames, s, gh, gw, "patch book");
  const at::Tensor x = frames.to(at::kFloat).contiguous().reshape({-1, 3, gh * s, gw * s});
  const bool holds = reference.defined();
  const at::Tensor ref = holds ? reference.to(at::kFloat).contiguous().reshape(x.sizes()) : x;
  const auto rs = ref.accessor<float, 4>();
  const at::Tensor p = palette.to(at::kFloat).contiguous();
  at::Tensor out = x.clone();
  const auto xs = x.accessor<float, 4>();
  const auto ps = p.accessor<float, 2>();
  auto os = out.accessor<float, 4>();
  const auto byte = [](float v) { return static_cast<int>(std::nearbyint((v + 1.0f) * 127.5f)); };
  for (int64_t n = 0; n < x.size(0); ++n) {
    for (int r = 0; r < gh; ++r) {
      for (int c = 0; c < gw; ++c) {
        const int cell = r * gw + c;
        int64_t best = -1, best_distance = std::numeric_limits<int64_t>::max();
        for (size_t k = 0; k < book.patches.size(); ++k) {
          const std::vector<int>& bound = book.cells[k];
          if (!bound.empty() && std::find(bound.begin(), bound.end(), cell) == bound.end())
            continue;
          int64_t distance = 0;
          for (int i = 0; i < s * s; ++i) {
            for (int ch = 0; ch < 3; ++ch) {
              const int d =
                  byte(xs[n][ch][r * s + i / s][c * s + i % s]) - byte(ps[book.patches[k][i]][ch]);
              distance += int64_t{d} * d;
            }
          }
          if (distance < best_distance) {
            best_distance = distance;
            best = static_cast<int64_t>(k);
          }
        }
        if (best < 0) continue;
        int changed = 0;
        for (int i = 0; i < s * s; ++i) {
          for (int ch = 0; ch < 3; ++ch) {
            if (byte(xs[n][ch][r * s + i / s][c * s + i % s]) !=
                byte(ps[book.patches[best][i]][ch])) {
              ++changed;
              break;
            }
          }
        }
        if (holds) {
          int held_changed = 0;
          for (int i = 0; i < s * s; ++i) {
            const int y = r * s + i / s, x0 = c * s + i % s;
            for (int ch = 0; ch < 3; ++ch) {
              if (byte(xs[n][ch][y][x0]) != byte(rs[n][ch][y][x0])) {
                ++held_changed;
                break;
              }
            }
          }
          const bool hold =
              fixed[cell] ? limits.fixed_hold > 0 && held_changed <= changed + limits.fixed_hold
                          : changed > 0 && held_changed <= limits.hold;
          if (hold) {
            for (int i = 0; i < s * s; ++i) {
              const int y = r * s + i / s, x0 = c * s + i % s;
              for (int ch = 0; ch < 3; ++ch) os[n][ch][y][x0] = rs[n][ch][y][x0];
            }
            continue;
          }
        }
        if (changed > (fixed[cell] ? limits.fixed_max_changed : limits.max_changed)) continue;
        for (int i = 0; i < s * s; ++i) {
          for (int ch = 0; ch < 3; ++ch) {
            os[n][ch][r * s + i / s][c * s + i % s] = ps[book.patches[best][i]][ch];
          }
        }
      }
    }
  }
  return out.reshape(frames.sizes());
}

}  // namespace wc::model
