/* PNG output for the example host (stb_image_write from Debian's libstb-dev). */
#ifndef WC_EXAMPLE_PNG_WRITER_H
#define WC_EXAMPLE_PNG_WRITER_H

#include <stdint.h>

/* Writes width x height RGBA8 pixels (rows row_pitch bytes apart); returns 0 on success. */
int write_png_rgba(const char* path, int width, int height, const uint8_t* pixels,
                   uint32_t row_pitch);

#endif
