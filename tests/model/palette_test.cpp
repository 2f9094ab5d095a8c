// Note [Palette snap]: the batched snap against the per-pixel loop on fresh random frames and
// palettes (small and chunked), small errors rounded back to the colour drawn, and the palette's
// bytes in model space.
#include <gtest/gtest.h>

#include "engine/model/palette.h"

namespace wc::model {
namespace {

at::Tensor random_palette(int64_t colours) {
  return at::rand({colours, 3}) * 2 - 1;
}

TEST(PaletteSnap, MatchesThePerPixelLoop) {
  at::manual_seed(31);                                              // fresh random inputs
  const at::Tensor frames = at::rand({2, 3, 3, 9, 7}) * 2.4 - 1.2;  // past [-1, 1] too
  const at::Tensor palette = random_palette(11);
  const at::Tensor snapped = snap_to_palette(frames, palette);
  ASSERT_EQ(snapped.sizes(), frames.sizes());
  EXPECT_TRUE(at::equal(snapped, snap_to_palette_reference(frames, palette)));
  // Every pixel is one of the palette's colours.
  const at::Tensor pixels = snapped.movedim(-3, -1).reshape({-1, 1, 3});
  EXPECT_TRUE((pixels == palette.unsqueeze(0)).all(-1).any(-1).all().item<bool>());
}

TEST(PaletteSnap, ChunksABigDistanceTableTheSameWay) {
  at::manual_seed(32);
  // 25 600 pixels x 256 colours x 3 passes the 16 M element chunk of palette.cpp.
  const at::Tensor frames = at::rand({1, 1, 3, 160, 160}) * 2 - 1;
  const at::Tensor palette = random_palette(256);
  EXPECT_TRUE(
      at::equal(snap_to_palette(frames, palette), snap_to_palette_reference(frames, palette)));
}

TEST(PaletteSnap, KeepsTheFrameDtypeAndRoundsSmallErrorsAway) {
  PaletteConfig config;
  config.colours = {{0, 0, 0}, {255, 255, 255}, {98, 178, 74}, {46, 102, 204}};
  const at::Tensor palette = palette_tensor(config, at::kCPU);
  EXPECT_TRUE(at::allclose(palette[2], at::tensor({98.f, 178.f, 74.f}) / 127.5 - 1));
  at::manual_seed(33);
  // A frame drawn from the palette, then disturbed by less than half the closest gap (0.55).
  const at::Tensor index = at::randint(0, 4, {1, 2, 8, 8}, at::kLong);
  const at::Tensor drawn =
      palette.index_select(0, index.flatten()).reshape({1, 2, 8, 8, 3}).movedim(-1, -3);
  const at::Tensor disturbed = drawn + (at::rand_like(drawn) * 2 - 1) * 0.15;
  EXPECT_TRUE(at::equal(snap_to_palette(disturbed, palette), drawn));
  const at::Tensor half = snap_to_palette(disturbed.to(at::kBFloat16), palette);
  EXPECT_EQ(half.scalar_type(), at::kBFloat16);
  EXPECT_TRUE(at::equal(half, drawn.to(at::kBFloat16)));
}

}  // namespace
}  // namespace wc::model
