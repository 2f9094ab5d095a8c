// SPIR-V of the shaders in this folder, compiled by glslc at build time and linked into the binary.
#pragma once

#include <cstddef>
#include <cstdint>

namespace wc::shaders {

struct Spirv {
  const uint32_t* words;
  size_t size_bytes;
};

Spirv present_vert();
Spirv present_frag();

}  // namespace wc::shaders
