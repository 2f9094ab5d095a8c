// Note [Palette snap] on CUDA: the snap of fresh random frames, float32 and bfloat16, against the
// per-pixel loop on the CPU (skipped without CUDA).
#include <gtest/gtest.h>
#include <torch/cuda.h>

#include "engine/model/palette.h"

namespace wc::model {
namespace {

TEST(PaletteGpu, SnapMatchesTheCpuLoop) {
  if (!torch::cuda::is_available()) GTEST_SKIP() << "no CUDA device";
  at::manual_seed(51);  // fresh random inputs
  const at::Tensor frames = at::rand({1, 2, 3, 128, 128}) * 2.2 - 1.1;
  const at::Tensor palette = at::rand({26, 3}) * 2 - 1;
  const at::Tensor on_gpu = snap_to_palette(frames.cuda(), palette.cuda());
  EXPECT_TRUE(at::equal(on_gpu.cpu(), snap_to_palette_reference(frames, palette)));
  // bfloat16 frames (play on the GPU): snapped from their own rounded values.
  const at::Tensor half = frames.to(at::kBFloat16);
  const at::Tensor half_gpu = snap_to_palette(half.cuda(), palette.cuda());
  EXPECT_EQ(half_gpu.scalar_type(), at::kBFloat16);
  EXPECT_TRUE(at::equal(half_gpu.cpu(),
                        snap_to_palette_reference(half.to(at::kFloat), palette).to(at::kBFloat16)));
}

}  // namespace
}  // namespace wc::model
