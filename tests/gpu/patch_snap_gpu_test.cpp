// Note [Patch snap] on CUDA: the snap of fresh random frames drawn from a random book, float32 and
// bfloat16, against the per-patch loop on the CPU (skipped without CUDA).
#include <gtest/gtest.h>
#include <torch/cuda.h>

#include <random>

#include "engine/model/patch_snap.h"
#include "tests/model/patch_fixtures.h"

namespace wc::model {
namespace {

TEST(PatchSnapGpu, SnapMatchesTheCpuLoop) {
  if (!torch::cuda::is_available()) GTEST_SKIP() << "no CUDA device";
  std::mt19937 random(std::random_device{}());  // fresh random inputs
  const at::Tensor palette = testing::palette_of_bytes(26, random);
  // The bundled model's shape: 8x8 patches of 128x128 frames, a book of 4096.
  const PatchBook book = testing::random_book(random, 8, 16, 16, 26, 4096);
  const at::Tensor frames = testing::frames_of_book(book, palette, 2, 3, random).unsqueeze(0);
  const at::Tensor before = testing::frames_of_book(book, palette, 2, 3, random).unsqueeze(0);
  const PatchSnap snap(book, palette.cuda(), {8, 64, 1, 4}, at::Device(at::kCUDA), "book");
  const at::Tensor on_gpu = snap.snap(frames.cuda(), before.cuda());
  EXPECT_TRUE(at::equal(on_gpu.cpu(),
                        snap_patches_reference(frames, book, palette, {8, 64, 1, 4}, before)));
  const at::Tensor half = frames.to(at::kBFloat16);
  const at::Tensor half_gpu = snap.snap(half.cuda());
  EXPECT_EQ(half_gpu.scalar_type(), at::kBFloat16);
  EXPECT_TRUE(at::equal(
      half_gpu.cpu(),
      snap_patches_reference(half.to(at::kFloat), book, palette, {8, 64, 1, 4}).to(at::kBFloat16)));
}

}  // namespace
}  // namespace wc::model
