/* See png_writer.h. */
#define STB_IMAGE_WRITE_IMPLEMENTATION
#include <stb_image_write.h>

#include "png_writer.h"

int write_png_rgba(const char* path, int width, int height, const uint8_t* pixels,
                   uint32_t row_pitch) {
  return stbi_write_png(path, width, height, 4, pixels, (int)row_pitch) ? 0 : -1;
}
