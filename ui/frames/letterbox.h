// Where the frame goes inside the target: integer (pixel-exact) or fitted upscale, centred, with
// bars around it. Pure arithmetic, shared by the present pass and the CPU reference in tests.
#pragma once

#include <optional>
#include <string>

namespace wc::ui {

enum class ScaleMode { kInteger, kFit };
enum class Filter { kNearest, kBilinear };

struct Rect {
  int x = 0;
  int y = 0;
  int width = 0;
  int height = 0;
};

// Integer mode uses the largest whole factor that fits (falling back to fit when the target is
// smaller than the frame); fit mode keeps the aspect ratio. The rect is centred (rounded down).
Rect letterbox(int frame_width, int frame_height, int target_width, int target_height,
               ScaleMode mode);

const char* filter_name(Filter filter);
std::optional<Filter> parse_filter(const std::string& text);

}  // namespace wc::ui
