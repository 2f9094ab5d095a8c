// Reads PNG files for the plugin tests (stb_image from Debian's libstb-dev).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace wc::plugin_test {

struct Png {
  int width = 0;
  int height = 0;
  std::vector<uint8_t> rgba;  // tightly packed RGBA8; empty when the file could not be read
};

Png read_png(const std::string& path);

}  // namespace wc::plugin_test
