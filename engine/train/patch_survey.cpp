// See patch_survey.h.
#include "engine/train/patch_survey.h"

#include <algorithm>
#include <limits>
#include <string>
#include <unordered_map>
#include <utility>

#include "engine/core/error.h"
#include "engine/train/clip_stream.h"

namespace wc::train {
namespace {

// One distinct patch: how often it was seen, and where while it was seen in few cells.
struct Seen {
  int64_t count = 0;
  std::vector<std::pair<int, int64_t>> cells;  // (cell, count) while local
  bool local = true;

  void add(int cell) {
    ++count;
    if (!local) return;
    for (auto& [c, n] : cells) {
      if (c == cell) {
        ++n;
        return;
      }
    }
    if (static_cast<int>(cells.size()) == kLocalCells) {
      local = false;
      cells.clear();
      return;
    }
    cells.emplace_back(cell, 1);
  }
};

// Maps each RGB byte triple to its nearest palette index (remembered per distinct colour), and
// counts the pixels that were not exactly a palette colour.
class PaletteIndex {
 public:
  explicit PaletteIndex(const std::vector<std::array<uint8_t, 3>>& palette) : palette_(palette) {}

  uint8_t operator()(const uint8_t* rgb) {
    const uint32_t key = uint32_t{rgb[0]} << 16 | uint32_t{rgb[1]} << 8 | rgb[2];
    auto found = known_.find(key);
    if (found == known_.end()) found = known_.emplace(key, nearest(rgb)).first;
    inexact_pixels_ += found->second.exact ? 0 : 1;
    return found->second.index;
  }
  int64_t inexact_pixels() const { return inexact_pixels_; }

 private:
  struct Nearest {
    uint8_t index;
    bool exact;
  };
  Nearest nearest(const uint8_t* rgb) const {
    int best = 0;
    int best_distance = std::numeric_limits<int>::max();
    for (size_t k = 0; k < palette_.size(); ++k) {
      int distance = 0;
      for (int c = 0; c < 3; ++c) distance += (rgb[c] - palette_[k][c]) * (rgb[c] - palette_[k][c]);
      if (distance < best_distance) {
        best_distance = distance;
        best = static_cast<int>(k);
      }
    }
    return {static_cast<uint8_t>(best), best_distance == 0};
  }

  const std::vector<std::array<uint8_t, 3>>& palette_;
  std::unordered_map<uint32_t, Nearest> known_;
  int64_t inexact_pixels_ = 0;
};

void check_inputs(int width, int height, const std::vector<std::array<uint8_t, 3>>& palette,
                  int size, int max_patches) {
  if (size < 1 || size > kMaxPatchSide) {
    throw Error("--size", "must be in [1, " + std::to_string(kMaxPatchSide) + "], got " +
                              std::to_string(size));
  }
  if (width % size != 0 || height % size != 0) {
    throw Error("--size", "the " + std::to_string(width) + "x" + std::to_string(height) +
                              " frames are not a whole number of " + std::to_string(size) +
                              "-pixel patches");
  }
  if (palette.empty() || static_cast<int>(palette.size()) > kMaxPatchColours) {
    throw Error("palette", "a patch survey holds 1 to " + std::to_string(kMaxPatchColours) +
                               " colours, the model's palette has " +
                               std::to_string(palette.size()));
  }
  if (max_patches < 1) {
    throw Error("--max-patches", "must be at least 1, got " + std::to_string(max_patches));
  }
}

// The counts of survey_patches, frame batch by frame batch (so no more than a batch of frames is
// held at once).
class PatchCounter {
 public:
  PatchCounter(int width, int height, const std::vector<std::array<uint8_t, 3>>& palette, int size)
      : width_(width),
        height_(height),
        size_(size),
        palette_(palette),
        index_(palette),
        key_(static_cast<size_t>(size) * size, '\0') {}

  void add(const uint8_t* frames, int count) {
    const int grid_w = width_ / size_, grid_h = height_ / size_;
    for (int f = 0; f < count; ++f) {
      const uint8_t* frame = frames + static_cast<size_t>(f) * width_ * height_ * 3;
      for (int r = 0; r < grid_h; ++r) {
        for (int c = 0; c < grid_w; ++c) {
          for (int i = 0; i < size_ * size_; ++i) {
            const int y = r * size_ + i / size_, x = c * size_ + i % size_;
            key_[i] = static_cast<char>(index_(frame + 3 * (y * width_ + x)));
          }
          seen_[key_].add(r * grid_w + c);
        }
      }
    }
    frames_ += count;
  }

  PatchSurvey finish(int max_patches, int min_count) const;

 private:
  int width_, height_, size_;
  const std::vector<std::array<uint8_t, 3>>& palette_;
  PaletteIndex index_;
  std::string key_;
  std::unordered_map<std::string, Seen> seen_;
  int64_t frames_ = 0;
};

PatchSurvey PatchCounter::finish(int max_patches, int min_count) const {
  const int cells = (width_ / size_) * (height_ / size_);
  PatchSurvey survey;
  survey.occurrences = frames_ * cells;
  survey.distinct = static_cast<int64_t>(seen_.size());
  const double pixels = static_cast<double>(frames_) * width_ * height_;
  survey.unmatched_pixels =
      frames_ > 0 ? static_cast<double>(index_.inexact_pixels()) / pixels : 0.0;

  // Screen-fixed cells: most of their occurrences are local patches.
  std::vector<int64_t> local(cells, 0);
  for (const auto& [patch, s] : seen_) {
    for (const auto& [cell, n] : s.cells) local[cell] += n;
  }
  std::vector<bool> fixed(cells, false);
  for (int cell = 0; cell < cells; ++cell) {
    fixed[cell] = frames_ > 0 && static_cast<double>(local[cell]) > kFixedShare * frames_;
    if (fixed[cell]) survey.fixed_cells.push_back(cell);
  }

  // The book: most common first, ties in key order, so every run surveys the same book.
  std::vector<const std::pair<const std::string, Seen>*> order;
  for (const auto& entry : seen_) {
    if (entry.second.count >= min_count) order.push_back(&entry);
  }
  std::sort(order.begin(), order.end(), [](const auto* a, const auto* b) {
    return a->second.count != b->second.count ? a->second.count > b->second.count
                                              : a->first < b->first;
  });
  if (order.size() > static_cast<size_t>(max_patches)) order.resize(max_patches);
  survey.book.size = size_;
  survey.book.frame_width = width_;
  survey.book.frame_height = height_;
  survey.book.colours = static_cast<int>(palette_.size());
  int64_t covered = 0;
  for (const auto* entry : order) {
    const Seen& s = entry->second;
    survey.book.patches.emplace_back(entry->first.begin(), entry->first.end());
    std::vector<int> bound;
    const bool all_fixed = s.local && std::all_of(s.cells.begin(), s.cells.end(),
                                                  [&](const auto& cn) { return fixed[cn.first]; });
    if (all_fixed) {
      for (const auto& [cell, n] : s.cells) bound.push_back(cell);
      std::sort(bound.begin(), bound.end());
      ++survey.bound_patches;
    }
    survey.book.cells.push_back(std::move(bound));
    survey.counts.push_back(s.count);
    covered += s.count;
  }
  survey.book_share =
      survey.occurrences > 0 ? static_cast<double>(covered) / survey.occurrences : 0.0;
  return survey;
}

}  // namespace

PatchSurvey survey_patches(const std::vector<uint8_t>& frames, int count, int width, int height,
                           const std::vector<std::array<uint8_t, 3>>& palette, int size,
                           int max_patches, int min_count) {
  check_inputs(width, height, palette, size, max_patches);
  if (frames.size() != static_cast<size_t>(count) * width * height * 3) {
    throw Error("patch survey", "expected " + std::to_string(count) + " frames of " +
                                    std::to_string(width) + "x" + std::to_string(height) +
                                    " RGB bytes, got " + std::to_string(frames.size()) + " bytes");
  }
  PatchCounter counter(width, height, palette, size);
  counter.add(frames.data(), count);
  return counter.finish(max_patches, min_count);
}

PatchSurvey survey_clip_patches(const ClipSpec& spec, int batch_size, uint64_t seed, int batches,
                                const std::vector<std::array<uint8_t, 3>>& palette, int size,
                                int max_patches, int min_count) {
  check_inputs(spec.width, spec.height, palette, size, max_patches);
  if (batches < 1) throw Error("--batches", "must be at least 1, got " + std::to_string(batches));
  PatchCounter counter(spec.width, spec.height, palette, size);
  for (int b = 0; b < batches; ++b) {
    const at::Tensor bytes = frame_bytes(make_clip_batch(spec, batch_size, seed, b));
    counter.add(bytes.data_ptr<uint8_t>(),
                static_cast<int>(bytes.numel() / (3 * spec.width * spec.height)));
  }
  return counter.finish(max_patches, min_count);
}

}  // namespace wc::train
