// Embeds glslc's `-mfmt=num` output (comma-separated words) as arrays; see CMakeLists.txt.
#include "shaders/embedded_shaders.h"

namespace wc::shaders {
namespace {

constexpr uint32_t kPresentVert[] = {
#include "shaders/present.vert.spv.inc"
};
constexpr uint32_t kPresentFrag[] = {
#include "shaders/present.frag.spv.inc"
};

}  // namespace

Spirv present_vert() {
  return {kPresentVert, sizeof(kPresentVert)};
}
Spirv present_frag() {
  return {kPresentFrag, sizeof(kPresentFrag)};
}

}  // namespace wc::shaders
