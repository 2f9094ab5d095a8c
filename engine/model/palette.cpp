// See palette.h.
#include "engine/model/palette.h"

#include "engine/core/error.h"

#include <limits>
#include <string>
#include <vector>

namespace wc::model {
namespace {

// Pixels per chunk of the distance table: its [pixels, K, 3] differences stay under ~64 MB.
int64_t chunk_pixels(int64_t colours) {
  constexpr int64_t kMaxElements = int64_t{16} << 20;
  return std::max<int64_t>(1, kMaxElements / (3 * colours));
}

}  // namespace

void apply_palette_snap(ModelConfig& config, const std::string& choice, const std::string& flag) {
  if (choice == "config") return;
  if (choice != "on" && choice != "off") {
    throw Error(flag, "must be on, off or config, got '" + choice + "'");
  }
  if (choice == "on" && config.palette.colours.empty()) {
    throw Error(flag, "the model config " + (config.file.empty() ? config.name : config.file) +
                          " has no palette (survey one: worldcast palette --write CONFIG)");
  }
  config.palette.snap = choice == "on";
}

at::Tensor palette_tensor(const PaletteConfig& palette, const at::Device& device) {
  std::vector<float> values;
  for (const auto& colour : palette.colours) {
    for (uint8_t byte : colour) values.push_back(static_cast<float>(byte) / 127.5f - 1.0f);
  }
  const int64_t count = static_cast<int64_t>(palette.colours.size());
  return at::tensor(values, at::kFloat).reshape({count, 3}).to(device);
}

at::Tensor snap_to_palette(const at::Tensor& frames, const at::Tensor& colours) {
  TORCH_CHECK(frames.dim() >= 3 && frames.size(-3) == 3, "snap_to_palette: frames [..., 3, H, W]");
  TORCH_CHECK(colours.dim() == 2 && colours.size(1) == 3, "snap_to_palette: colours [K, 3]");
  // Channels last, one row a pixel; differences, not the expanded |x|² − 2x·p + |p|², so that
  // near ties round as the reference's do.
  const at::Tensor pixels = frames.to(at::kFloat).movedim(-3, -1).reshape({-1, 3});
  const at::Tensor palette = colours.to(pixels.device(), at::kFloat);
  std::vector<at::Tensor> nearest;
  for (const at::Tensor& chunk : pixels.split(chunk_pixels(palette.size(0)))) {
    const at::Tensor distance = (chunk.unsqueeze(1) - palette.unsqueeze(0)).square().sum(-1);
    nearest.push_back(distance.argmin(1));
  }
  const at::Tensor snapped = palette.index_select(0, at::cat(nearest));
  std::vector<int64_t> shape = frames.movedim(-3, -1).sizes().vec();
  return snapped.reshape(shape).movedim(-1, -3).to(frames.scalar_type()).contiguous();
}

at::Tensor snap_to_palette_reference(const at::Tensor& frames, const at::Tensor& colours) {
  const at::Tensor x =
      frames.to(at::kFloat).contiguous().reshape({-1, 3, frames.size(-2) * frames.size(-1)});
  const at::Tensor p = colours.to(at::kFloat).contiguous();
  at::Tensor out = at::empty_like(x);
  const auto xs = x.accessor<float, 3>();
  const auto ps = p.accessor<float, 2>();
  auto os = out.accessor<float, 3>();
  for (int64_t n = 0; n < x.size(0); ++n) {
    for (int64_t i = 0; i < x.size(2); ++i) {
      int64_t best = 0;
      float best_distance = std::numeric_limits<float>::infinity();
      for (int64_t k = 0; k < p.size(0); ++k) {
        float distance = 0.0f;
        for (int64_t c = 0; c < 3; ++c) {
          const float d = xs[n][c][i] - ps[k][c];
          distance += d * d;
        }
        if (distance < best_distance) {
          best_distance = distance;
          best = k;
        }
      }
      for (int64_t c = 0; c < 3; ++c) os[n][c][i] = ps[best][c];
    }
  }
  return out.reshape(frames.sizes());
}

}  // namespace wc::model
