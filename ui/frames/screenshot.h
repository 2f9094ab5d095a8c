// PNG output for headless frames and F12 screenshots (stb_image_write, written atomically).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace wc::ui {

// Encodes `rgba` (width*height*4, tightly packed) as PNG and writes it atomically; throws
// wc::Error naming the path on failure.
void write_png(const std::string& path, int width, int height, const uint8_t* rgba);

// Swizzles B8G8R8A8 pixels (a swapchain's usual format) to RGBA8, forcing alpha to 255.
std::vector<uint8_t> bgra_to_rgba(const uint8_t* bgra, size_t pixel_count);

}  // namespace wc::ui
