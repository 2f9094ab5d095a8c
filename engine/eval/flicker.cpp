// See flicker.h.
#include "engine/eval/flicker.h"

#include "engine/core/error.h"
#include "engine/eval/frame_tensor.h"

namespace wc::eval {

void FrameDifferences::add_sequence(const std::vector<at::Tensor>& frames, int frames_per_block,
                                    int64_t first_index) {
  if (frames_per_block < 1) throw Error("flicker", "frames_per_block must be at least 1");
  for (size_t i = 1; i < frames.size(); ++i) {
    check_frame_pair(frames[i - 1], frames[i], "flicker");
    const double difference =
        (rgb_planes(frames[i]) - rgb_planes(frames[i - 1])).abs().mean().item<double>();
    const int64_t index = first_index + static_cast<int64_t>(i);
    if (index % frames_per_block == 0) {
      boundary_sum += difference;
      ++boundary_pairs;
    } else {
      inside_sum += difference;
      ++inside_pairs;
    }
  }
}

void FrameDifferences::add(const FrameDifferences& other) {
  boundary_sum += other.boundary_sum;
  boundary_pairs += other.boundary_pairs;
  inside_sum += other.inside_sum;
  inside_pairs += other.inside_pairs;
}

std::optional<double> FrameDifferences::boundary_mean() const {
  if (boundary_pairs == 0) return std::nullopt;
  return boundary_sum / static_cast<double>(boundary_pairs);
}

std::optional<double> FrameDifferences::inside_mean() const {
  if (inside_pairs == 0) return std::nullopt;
  return inside_sum / static_cast<double>(inside_pairs);
}

std::optional<double> block_flicker(const FrameDifferences& differences) {
  const auto boundary = differences.boundary_mean(), inside = differences.inside_mean();
  if (!boundary || !inside || *inside <= 0.0) return std::nullopt;
  return *boundary / *inside;
}

std::optional<double> flicker_vs_reference(const FrameDifferences& policy,
                                           const FrameDifferences& reference) {
  const auto mine = policy.boundary_mean(), theirs = reference.boundary_mean();
  if (!mine || !theirs || *theirs <= 0.0) return std::nullopt;
  return *mine / *theirs;
}

}  // namespace wc::eval
