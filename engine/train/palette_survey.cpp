// See palette_survey.h.
#include "engine/train/palette_survey.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <string>

#include "engine/core/error.h"
#include "engine/train/clip_stream.h"

namespace wc::train {
namespace {

uint32_t pack(const uint8_t* rgb) {
  return uint32_t{rgb[0]} << 16 | uint32_t{rgb[1]} << 8 | rgb[2];
}
Rgb unpack(uint32_t key) {
  return {static_cast<uint8_t>(key >> 16), static_cast<uint8_t>(key >> 8),
          static_cast<uint8_t>(key)};
}

// Pixel counts by colour (ordered, so every tie below breaks the same way on every machine).
using ColourCounts = std::map<uint32_t, int64_t>;

void count_pixels(const uint8_t* rgb, size_t pixels, ColourCounts& counts) {
  for (size_t i = 0; i < pixels; ++i) ++counts[pack(rgb + 3 * i)];
}

struct Weighted {
  std::array<double, 3> rgb;
  int64_t count;
};

double distance2(const std::array<double, 3>& a, const std::array<double, 3>& b) {
  double d = 0.0;
  for (int c = 0; c < 3; ++c) d += (a[c] - b[c]) * (a[c] - b[c]);
  return d;
}

size_t nearest(const std::array<double, 3>& x, const std::vector<std::array<double, 3>>& centres) {
  size_t best = 0;
  double best_distance = std::numeric_limits<double>::infinity();
  for (size_t k = 0; k < centres.size(); ++k) {
    const double d = distance2(x, centres[k]);
    if (d < best_distance) {
      best_distance = d;
      best = k;
    }
  }
  return best;
}

// Lloyd's k-means over the distinct colours weighted by their counts, from the `k` most common
// (`colours` is sorted most common first). Centres are rounded to bytes at the end.
std::vector<std::array<double, 3>> cluster(const std::vector<Weighted>& colours, size_t k) {
  constexpr int kMaxIterations = 30;
  std::vector<std::array<double, 3>> centres;
  for (size_t i = 0; i < k; ++i) centres.push_back(colours[i].rgb);
  std::vector<size_t> owner(colours.size(), k);
  for (int iteration = 0; iteration < kMaxIterations; ++iteration) {
    bool moved = false;
    for (size_t i = 0; i < colours.size(); ++i) {
      const size_t best = nearest(colours[i].rgb, centres);
      moved |= best != owner[i];
      owner[i] = best;
    }
    if (!moved) break;
    std::vector<std::array<double, 3>> sum(k, {0.0, 0.0, 0.0});
    std::vector<double> weight(k, 0.0);
    for (size_t i = 0; i < colours.size(); ++i) {
      const double w = static_cast<double>(colours[i].count);
      for (int c = 0; c < 3; ++c) sum[owner[i]][c] += w * colours[i].rgb[c];
      weight[owner[i]] += w;
    }
    // A centre that lost every colour keeps its place (it still seeds the next assignment).
    for (size_t j = 0; j < k; ++j) {
      if (weight[j] > 0.0) {
        for (int c = 0; c < 3; ++c) centres[j][c] = sum[j][c] / weight[j];
      }
    }
  }
  for (auto& centre : centres) {
    for (double& v : centre) v = std::clamp(std::round(v), 0.0, 255.0);
  }
  return centres;
}

PaletteSurvey finish(const ColourCounts& counts, int max_colours) {
  PaletteSurvey survey;
  survey.distinct = static_cast<int64_t>(counts.size());
  std::vector<Weighted> colours;
  for (const auto& [key, count] : counts) {
    const Rgb rgb = unpack(key);
    colours.push_back(
        {{static_cast<double>(rgb[0]), static_cast<double>(rgb[1]), static_cast<double>(rgb[2])},
         count});
    survey.pixels += count;
  }
  if (colours.empty()) return survey;
  std::stable_sort(colours.begin(), colours.end(),
                   [](const Weighted& a, const Weighted& b) { return a.count > b.count; });
  const size_t k = std::min(colours.size(), static_cast<size_t>(max_colours));
  std::vector<std::array<double, 3>> centres;
  if (k == colours.size()) {
    for (const Weighted& colour : colours) centres.push_back(colour.rgb);
  } else {
    centres = cluster(colours, k);
  }
  // Shares and error against the final (byte) centres.
  std::vector<int64_t> owned(centres.size(), 0);
  double squared = 0.0;
  for (const Weighted& colour : colours) {
    const size_t j = nearest(colour.rgb, centres);
    owned[j] += colour.count;
    squared += static_cast<double>(colour.count) * distance2(colour.rgb, centres[j]);
  }
  std::vector<size_t> order(centres.size());
  for (size_t j = 0; j < order.size(); ++j) order[j] = j;
  std::stable_sort(order.begin(), order.end(),
                   [&](size_t a, size_t b) { return owned[a] > owned[b]; });
  for (size_t j : order) {
    if (owned[j] == 0) continue;  // a centre nothing is nearest to is no colour of the data
    survey.colours.push_back({static_cast<uint8_t>(centres[j][0]),
                              static_cast<uint8_t>(centres[j][1]),
                              static_cast<uint8_t>(centres[j][2])});
    survey.shares.push_back(static_cast<double>(owned[j]) / static_cast<double>(survey.pixels));
  }
  survey.rms_error = std::sqrt(squared / static_cast<double>(survey.pixels) / 3.0);
  return survey;
}

void check_max_colours(int max_colours) {
  if (max_colours < 1) {
    throw Error("--max-colours", "must be at least 1, got " + std::to_string(max_colours));
  }
}

}  // namespace

PaletteSurvey survey_pixels(const std::vector<uint8_t>& pixels, int max_colours) {
  check_max_colours(max_colours);
  ColourCounts counts;
  count_pixels(pixels.data(), pixels.size() / 3, counts);
  return finish(counts, max_colours);
}

PaletteSurvey survey_palette(const ClipSpec& spec, int batch_size, uint64_t seed, int batches,
                             int max_colours) {
  check_max_colours(max_colours);
  if (batches < 1) throw Error("--batches", "must be at least 1, got " + std::to_string(batches));
  ColourCounts counts;
  for (int b = 0; b < batches; ++b) {
    const at::Tensor bytes = frame_bytes(make_clip_batch(spec, batch_size, seed, b));
    count_pixels(bytes.data_ptr<uint8_t>(), static_cast<size_t>(bytes.numel() / 3), counts);
  }
  return finish(counts, max_colours);
}

}  // namespace wc::train
