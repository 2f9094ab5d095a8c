// The CUDA frame kind in a build without CUDA: see cuda_frames.h.
#include "plugin/src/cuda_frames.h"
#include "plugin/src/plugin_error.h"

namespace wc::plugin {

bool cuda_built() {
  return false;
}
int cuda_device_count() {
  return 0;
}
int cuda_device_for_uuid(const uint8_t*) {
  return -1;
}
std::unique_ptr<CudaFrameRing> make_cuda_frame_ring(int, int, int, int) {
  throw PluginError(WC_RESULT_ERROR_UNSUPPORTED,
                    "CUDA frames need a plugin built with WORLDCAST_CUDA=ON (the gpu preset)");
}

}  // namespace wc::plugin
