# Source on the GPU machine from the project root (after ../shared/device/prepare-gpu-deps.sh made
# .gpu-deps here and the validation layer .deb was put in .gpu-deps/extra/ on your own machine:
# `mkdir -p .gpu-deps/extra && (cd .gpu-deps/extra && apt-get download vulkan-validationlayers)`):
# the carried Debian packages, LibTorch 2.11, the NVIDIA EGL Vulkan ICD, and the Khronos
# validation layer, without which the Vulkan GPU tests fail at instance creation.
source .gpu-deps/env.sh
for deb in .gpu-deps/extra/*.deb; do
  [ -e "$deb" ] && dpkg -x "$deb" "$WORLDCAST_GPU_DEPS"
done
export VK_LAYER_PATH="$WORLDCAST_GPU_DEPS/usr/share/vulkan/explicit_layer.d"
if [ ! -e "$VK_LAYER_PATH/VkLayer_khronos_validation.json" ]; then
  echo "device_env: no validation layer in .gpu-deps/extra: the Vulkan GPU tests will fail" \
    "(apt-get download vulkan-validationlayers into .gpu-deps/extra on your own machine)" >&2
fi
