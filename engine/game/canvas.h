// A clipped view of an RGBA8 frame for the renderer: every write outside the frame is dropped,
// so sprites and tiles may hang over its edges.
#pragma once

#include <cstdint>
#include <cstring>

namespace wc::game {

struct Canvas {
  uint8_t* rgba;
  int width;
  int height;

  void put(int x, int y, uint32_t pixel) const {
    if (x < 0 || y < 0 || x >= width || y >= height) return;
    std::memcpy(rgba + (static_cast<size_t>(y) * width + x) * 4, &pixel, 4);
  }
  void fill(int x0, int y0, int w, int h, uint32_t pixel) const {
    for (int y = y0; y < y0 + h; ++y) {
      for (int x = x0; x < x0 + w; ++x) put(x, y, pixel);
    }
  }
  // Copies a `w` x `h` block of pixels (row stride `w`) to (x0, y0); transparent pixels are
  // copied too, so callers pass only opaque blocks here.
  void blit(const uint32_t* pixels, int w, int h, int x0, int y0) const {
    const int left = x0 < 0 ? -x0 : 0;
    const int right = x0 + w > width ? width - x0 : w;
    if (left >= right) return;
    for (int y = 0; y < h; ++y) {
      const int row = y0 + y;
      if (row < 0 || row >= height) continue;
      std::memcpy(rgba + (static_cast<size_t>(row) * width + x0 + left) * 4, pixels + y * w + left,
                  static_cast<size_t>(right - left) * 4);
    }
  }
};

}  // namespace wc::game
