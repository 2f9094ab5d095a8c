// The one translation unit that compiles stb_image_write (static, so it cannot clash with the
// copy inside Debian's libstb that pkg-config imgui also links).
#include "ui/frames/screenshot.h"

#define STB_IMAGE_WRITE_IMPLEMENTATION
#define STB_IMAGE_WRITE_STATIC
#include <stb/stb_image_write.h>

#include <cstdlib>
#include <memory>

#include "engine/core/atomic_file.h"
#include "engine/core/error.h"

namespace wc::ui {

void write_png(const std::string& path, int width, int height, const uint8_t* rgba) {
  int size = 0;
  std::unique_ptr<unsigned char, void (*)(void*)> png(
      stbi_write_png_to_mem(rgba, width * 4, width, height, 4, &size), std::free);
  if (!png) throw Error(path, "PNG encoding failed");
  write_file_atomically(path, png.get(), static_cast<size_t>(size));
}

std::vector<uint8_t> bgra_to_rgba(const uint8_t* bgra, size_t pixel_count) {
  std::vector<uint8_t> rgba(pixel_count * 4);
  for (size_t i = 0; i < pixel_count; ++i) {
    rgba[i * 4 + 0] = bgra[i * 4 + 2];
    rgba[i * 4 + 1] = bgra[i * 4 + 1];
    rgba[i * 4 + 2] = bgra[i * 4 + 0];
    rgba[i * 4 + 3] = 255;
  }
  return rgba;
}

}  // namespace wc::ui
