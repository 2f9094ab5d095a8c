// See world_memory.h.
#include "engine/rollout/world_memory.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>

#include "engine/core/error.h"

namespace wc::rollout {
namespace {

// Half a byte step of a frame in [−1, 1]: two values closer than this are the same byte.
constexpr float kSameValue = 1.0f / 255.0f;

int64_t floor_div(int64_t a, int64_t b) {
  return a >= 0 ? a / b : -((-a + b - 1) / b);
}

// A [C, H, W] float32 CPU frame's values, row-major, checked against the memory's frame size.
const float* frame_values(const at::Tensor& frame, int channels, int height, int width,
                          at::Tensor& keep) {
  if (frame.dim() != 3 || frame.size(0) != channels || frame.size(1) != height ||
      frame.size(2) != width) {
    throw Error("world memory", "expected a [" + std::to_string(channels) + ", " +
                                    std::to_string(height) + ", " + std::to_string(width) +
                                    "] frame, got " + std::to_string(frame.dim()) + " dims");
  }
  keep = frame.to(at::kCPU, at::kFloat).contiguous();
  return keep.data_ptr<float>();
}

}  // namespace

WorldMemory::WorldMemory(int height, int width, int channels, int move_pixels, int64_t max_cells,
                         int64_t max_age_frames)
    : height_(height),
      width_(width),
      channels_(channels),
      m_(move_pixels),
      max_cells_(max_cells),
      max_age_frames_(max_age_frames) {
  if (m_ <= 0 || height_ < 2 * m_ || width_ < 2 * m_ || height_ % m_ != 0 || width_ % m_ != 0) {
    throw Error("world memory", "a " + std::to_string(width_) + "x" + std::to_string(height_) +
                                    " frame is not a whole number (at least two) of moves of " +
                                    std::to_string(m_) + " pixels each way");
  }
  if (max_cells_ < 1) throw Error("world memory", "max_cells must be positive");
  if (max_age_frames_ < 0) throw Error("world memory", "max_age_frames must not be negative");
}

uint64_t WorldMemory::key(int64_t cell_y, int64_t cell_x) {
  return (static_cast<uint64_t>(static_cast<uint32_t>(cell_y)) << 32) |
         static_cast<uint32_t>(cell_x);
}

WorldMemory::Cell& WorldMemory::cell_at(int64_t cell_y, int64_t cell_x) {
  Cell& cell = cells_[key(cell_y, cell_x)];
  if (cell.bytes.empty()) {
    cell.bytes.assign(static_cast<size_t>(channels_) * m_ * m_, 0);
    cell.known.assign(static_cast<size_t>(m_) * m_, 0);
    cell.born = frame_;
  }
  return cell;
}

bool WorldMemory::expired(const Cell& cell) const {
  return max_age_frames_ > 0 && frame_ - cell.born >= static_cast<uint64_t>(max_age_frames_);
}

void WorldMemory::forget_expired() {
  for (auto it = cells_.begin(); it != cells_.end();) {
    it = expired(it->second) ? cells_.erase(it) : std::next(it);
  }
}

void WorldMemory::forget_oldest() {
  std::vector<uint64_t> times;
  times.reserve(cells_.size());
  for (const auto& item : cells_) times.push_back(item.second.written);
  const size_t quarter = times.size() / 4;
  std::nth_element(times.begin(), times.begin() + static_cast<std::ptrdiff_t>(quarter),
                   times.end());
  const uint64_t cut = times[quarter];
  for (auto it = cells_.begin(); it != cells_.end();) {
    it = it->second.written <= cut ? cells_.erase(it) : std::next(it);
  }
}

int WorldMemory::observe(const at::Tensor& before, const at::Tensor& after) {
  at::Tensor keep_before, keep_after;
  const float* b = frame_values(before, channels_, height_, width_, keep_before);
  const float* a = frame_values(after, channels_, height_, width_, keep_after);
  ++frame_;
  if (max_age_frames_ > 0) forget_expired();
  const int64_t h = height_, w = width_, plane = h * w, m = m_;
  // The moves' offsets (rows, columns) in prediction.h's order: after(p) = before(p + o_j).
  const int64_t offsets[5][2] = {{0, 0}, {-m, 0}, {m, 0}, {0, -m}, {0, m}};
  const auto same = [&](int64_t y, int64_t x, int64_t source_y, int64_t source_x) {
    for (int64_t c = 0; c < channels_; ++c) {
      if (std::abs(a[c * plane + y * w + x] - b[c * plane + source_y * w + source_x]) > kSameValue)
        return false;
    }
    return true;
  };
  double share[5];
  for (int j = 0; j < 5; ++j) {
    const int64_t dy = offsets[j][0], dx = offsets[j][1];
    int64_t matches = 0, candidates = 0;
    for (int64_t y = std::max<int64_t>(0, -dy); y < std::min(h, h - dy); ++y) {
      for (int64_t x = std::max<int64_t>(0, -dx); x < std::min(w, w - dx); ++x) {
        ++candidates;
        matches += same(y, x, y + dy, x + dx);
      }
    }
    share[j] = static_cast<double>(matches) / static_cast<double>(candidates);
  }
  const int step = static_cast<int>(std::max_element(share + 1, share + 5) - share);
  if (share[step] <= share[0]) return 0;

  // The strip of `before` the step pushed out: pixels q with q − o outside the view.
  const int64_t dy = offsets[step][0], dx = offsets[step][1];
  const int64_t y0 = dy < 0 ? h - m : 0, y1 = dy > 0 ? m : h;
  const int64_t x0 = dx < 0 ? w - m : 0, x1 = dx > 0 ? m : w;
  ++clock_;
  for (int64_t y = y0; y < y1; ++y) {
    for (int64_t x = x0; x < x1; ++x) {
      // Ground scrolled on here; a screen-fixed pixel stayed and is not ground.
      if (!same(y, x, y + dy, x + dx)) continue;
      const int64_t world_y = view_y_ + y, world_x = view_x_ + x;
      const int64_t cell_y = floor_div(world_y, m), cell_x = floor_div(world_x, m);
      Cell& cell = cell_at(cell_y, cell_x);
      const int64_t in_y = world_y - cell_y * m, in_x = world_x - cell_x * m;
      for (int64_t c = 0; c < channels_; ++c) {
        const float v = std::clamp(b[c * plane + y * w + x], -1.0f, 1.0f);
        cell.bytes[static_cast<size_t>((c * m + in_y) * m + in_x)] =
            static_cast<uint8_t>(std::lround((v + 1.0f) * 127.5f));
      }
      cell.known[static_cast<size_t>(in_y * m + in_x)] = 1;
      cell.written = clock_;
    }
  }
  view_y_ += dy;
  view_x_ += dx;
  if (static_cast<int64_t>(cells_.size()) > max_cells_) forget_oldest();
  return step;
}

at::Tensor WorldMemory::surround(const at::Tensor& frame) const {
  at::Tensor keep;
  frame_values(frame, channels_, height_, width_, keep);
  const int64_t m = m_, h = height_, w = width_;
  at::Tensor out = at::full({channels_, h + 2 * m, w + 2 * m},
                            std::numeric_limits<float>::quiet_NaN(), at::kFloat);
  out.slice(1, m, m + h).slice(2, m, m + w).copy_(keep);
  auto values = out.accessor<float, 3>();
  // The view is always a whole number of cells from the origin.
  const int64_t first_y = view_y_ / m - 1, first_x = view_x_ / m - 1;
  const int64_t rows = h / m + 2, columns = w / m + 2;
  for (int64_t i = 0; i < rows; ++i) {
    for (int64_t j = 0; j < columns; ++j) {
      if (i > 0 && i < rows - 1 && j > 0 && j < columns - 1) continue;  // inside the view
      const auto found = cells_.find(key(first_y + i, first_x + j));
      if (found == cells_.end()) continue;
      const Cell& cell = found->second;
      for (int64_t y = 0; y < m; ++y) {
        for (int64_t x = 0; x < m; ++x) {
          if (!cell.known[static_cast<size_t>(y * m + x)]) continue;
          for (int64_t c = 0; c < channels_; ++c) {
            values[c][i * m + y][j * m + x] =
                cell.bytes[static_cast<size_t>((c * m + y) * m + x)] / 127.5f - 1.0f;
          }
        }
      }
    }
  }
  return out;
}

}  // namespace wc::rollout
