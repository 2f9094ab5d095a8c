# Source on the GPU machine from the project root (after ../shared/device/prepare-gpu-deps.sh made
# .gpu-deps here and the validation layer .deb was put in .gpu-deps/extra/): the carried Debian
# packages, LibTorch 2.11, the NVIDIA EGL Vulkan ICD, and the Khronos validation layer.
source .gpu-deps/env.sh
for deb in .gpu-deps/extra/*.deb; do
  [ -e "$deb" ] && dpkg -x "$deb" "$WORLDCAST_GPU_DEPS"
done
export VK_LAYER_PATH="$WORLDCAST_GPU_DEPS/usr/share/vulkan/explicit_layer.d"
