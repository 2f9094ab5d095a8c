// Note [Overlay repair]: the damage is what one of the four moves brought into the overlay at
// frame k, held from then on, and nothing else; checked pixel by pixel on fresh random frames.
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cstdint>

#include "engine/train/overlay_damage.h"

namespace wc::train {
namespace {

constexpr int kSide = 16, kMove = 4;
// Pixel p of move j shows the frame's pixel p + o_j, the border repeated (Note [Moved reference]).
constexpr std::array<std::array<int, 2>, 5> kOffsets = {
    {{0, 0}, {-kMove, 0}, {kMove, 0}, {0, -kMove}, {0, kMove}}};

// A centred sprite and a HUD in the corner, as the game's overlays lie.
at::Tensor test_overlay() {
  at::Tensor overlay = at::zeros({kSide, kSide}, at::kBool);
  overlay.slice(0, 5, 11).slice(1, 5, 11).fill_(true);
  overlay.slice(0, 0, 2).slice(1, 0, 6).fill_(true);
  return overlay;
}

at::Tensor random_history(int clips, int frames, uint64_t seed) {
  at::manual_seed(seed);
  return at::rand({clips, frames, 3, kSide, kSide}) * 2 - 1;
}

// True when `value` ([3]) is frame `frame` ([3, H, W]) at (y, x) moved by one of the four moves.
bool is_a_move_of(const at::Tensor& frame, int y, int x, const at::Tensor& value) {
  for (size_t j = 1; j < kOffsets.size(); ++j) {
    const int sy = std::clamp(y + kOffsets[j][0], 0, kSide - 1);
    const int sx = std::clamp(x + kOffsets[j][1], 0, kSide - 1);
    if (frame.select(1, sy).select(1, sx).equal(value)) return true;
  }
  return false;
}

// Every pixel of every frame against the rule, for `frames_per_block` frames a block.
void expect_damage_follows_the_rule(int frames, int frames_per_block, uint64_t seed) {
  const int clips = 6;
  const at::Tensor history = random_history(clips, frames, seed);
  const at::Tensor overlay = test_overlay();
  const OverlayDamage d = damage_overlays(history, overlay, kMove, 1.0, frames_per_block, seed + 1);
  ASSERT_EQ(d.history.sizes(), history.sizes());
  const auto in = overlay.accessor<bool, 2>();
  const auto pixels = d.pixels.accessor<bool, 3>();
  for (int b = 0; b < clips; ++b) {
    SCOPED_TRACE("clip " + std::to_string(b));
    ASSERT_TRUE(d.damaged[b].item<bool>()) << "share 1 damages every clip";
    const int64_t k = d.first[b].item<int64_t>();
    EXPECT_GE(k, frames_per_block) << "the sink stays intact";
    EXPECT_LE(k, frames - frames_per_block - 1) << "a later block reads the first damaged frame";
    int64_t count = 0, overlay_pixels = 0;
    for (int y = 0; y < kSide; ++y) {
      for (int x = 0; x < kSide; ++x) {
        overlay_pixels += in[y][x];
        const bool hit = pixels[b][y][x];
        count += hit;
        EXPECT_TRUE(!hit || in[y][x]) << "damage outside the overlay at " << y << "," << x;
        const at::Tensor shown = d.history[b].select(2, y).select(2, x);  // [F, 3]
        const at::Tensor truth = history[b].select(2, y).select(2, x);
        for (int f = 0; f < frames; ++f) {
          if (!hit || f < k) {
            EXPECT_TRUE(shown[f].equal(truth[f])) << "frame " << f << " at " << y << "," << x;
          } else {
            EXPECT_TRUE(shown[f].equal(shown[k])) << "the damage is held, frame " << f;
          }
        }
        if (hit) {
          EXPECT_TRUE(is_a_move_of(history[b][k], y, x, shown[k])) << y << "," << x;
        }
      }
    }
    EXPECT_GT(count, 0);
    EXPECT_LE(count, kMaxDamageShare * overlay_pixels + 8) << "at most half the overlay, about";
  }
}

TEST(OverlayDamage, DamageIsAMovesPixelHeldFromItsFrame) {
  expect_damage_follows_the_rule(6, 1, 11);
  expect_damage_follows_the_rule(6, 1, 12);
}

TEST(OverlayDamage, BlocksOfTwoFramesKeepTheSinkBlock) {
  expect_damage_follows_the_rule(8, 2, 21);
}

TEST(OverlayDamage, ShareOfClipsAndOfPixels) {
  const int clips = 400;
  const at::Tensor history = random_history(clips, 4, 3);
  const at::Tensor overlay = test_overlay();
  const OverlayDamage none = damage_overlays(history, overlay, kMove, 0.0, 1, 5);
  EXPECT_FALSE(none.damaged.any().item<bool>());
  EXPECT_TRUE(none.history.equal(history));
  EXPECT_TRUE((none.first == -1).all().item<bool>());

  const OverlayDamage half = damage_overlays(history, overlay, kMove, 0.5, 1, 5);
  const double clip_share = half.damaged.to(at::kFloat).mean().item<double>();
  EXPECT_NEAR(clip_share, 0.5, 0.1);
  // Each damaged clip's pixel share is uniform in (0, 0.5]: a mean of about a quarter.
  const at::Tensor per_clip =
      half.pixels.flatten(1).sum(1).to(at::kFloat) / overlay.sum().to(at::kFloat);
  const double mean_share = per_clip.masked_select(half.damaged).mean().item<double>();
  EXPECT_NEAR(mean_share, kMaxDamageShare / 2, 0.05);
  const at::Tensor changed = (half.history != history).any(2).any(1);  // [B, H, W]
  EXPECT_TRUE(changed.equal(changed & half.pixels)) << "only damaged pixels change";

  // The draws follow the seed.
  EXPECT_TRUE(damage_overlays(history, overlay, kMove, 0.5, 1, 5).history.equal(half.history));
  EXPECT_FALSE(damage_overlays(history, overlay, kMove, 0.5, 1, 6).history.equal(half.history));
}

TEST(OverlayDamage, ClipsOfTwoBlocksStayIntact) {
  const at::Tensor history = random_history(5, 2, 7);
  const OverlayDamage d = damage_overlays(history, test_overlay(), kMove, 1.0, 1, 9);
  EXPECT_FALSE(d.damaged.any().item<bool>());
  EXPECT_TRUE(d.history.equal(history));
}

}  // namespace
}  // namespace wc::train
