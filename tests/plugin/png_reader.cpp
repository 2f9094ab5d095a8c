// See png_reader.h. Compiled without our warning flags: stb_image is third-party code.
#define STB_IMAGE_IMPLEMENTATION
#define STBI_ONLY_PNG
#include <stb_image.h>

#include "tests/plugin/png_reader.h"

namespace wc::plugin_test {

Png read_png(const std::string& path) {
  Png png;
  int channels = 0;
  stbi_uc* pixels = stbi_load(path.c_str(), &png.width, &png.height, &channels, 4);
  if (!pixels) return png;
  png.rgba.assign(pixels, pixels + static_cast<size_t>(png.width) * png.height * 4);
  stbi_image_free(pixels);
  return png;
}

}  // namespace wc::plugin_test
