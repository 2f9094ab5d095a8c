// Letterbox arithmetic; see letterbox.h.
#include "ui/frames/letterbox.h"

#include <algorithm>
#include <cmath>

namespace wc::ui {

Rect letterbox(int frame_width, int frame_height, int target_width, int target_height,
               ScaleMode mode) {
  if (frame_width <= 0 || frame_height <= 0 || target_width <= 0 || target_height <= 0) return {};
  int width = 0;
  int height = 0;
  const int factor = std::min(target_width / frame_width, target_height / frame_height);
  if (mode == ScaleMode::kInteger && factor >= 1) {
    width = frame_width * factor;
    height = frame_height * factor;
  } else {
    const double scale = std::min(static_cast<double>(target_width) / frame_width,
                                  static_cast<double>(target_height) / frame_height);
    width = std::clamp(static_cast<int>(std::lround(frame_width * scale)), 1, target_width);
    height = std::clamp(static_cast<int>(std::lround(frame_height * scale)), 1, target_height);
  }
  return {(target_width - width) / 2, (target_height - height) / 2, width, height};
}

const char* filter_name(Filter filter) {
  return filter == Filter::kNearest ? "nearest" : "bilinear";
}

std::optional<Filter> parse_filter(const std::string& text) {
  if (text == "nearest") return Filter::kNearest;
  if (text == "bilinear" || text == "linear") return Filter::kBilinear;
  return std::nullopt;
}

}  // namespace wc::ui
