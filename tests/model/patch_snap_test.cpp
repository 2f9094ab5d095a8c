// Note [Patch snap]: the batched snap against the per-patch loop on fresh random frames and books
// (bound cells, every max_changed), near misses repaired and far ones left, a bound patch kept to
// its cells, the frame's dtype kept and another frame size refused.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <random>

#include "engine/core/error.h"
#include "engine/model/patch_snap.h"
#include "tests/model/patch_fixtures.h"

namespace wc::model {
namespace {

using testing::frames_of_book;
using ::testing::HasSubstr;
using testing::palette_of_bytes;
using testing::random_book;

TEST(PatchSnap, MatchesThePerPatchLoop) {
  std::mt19937 random(std::random_device{}());  // fresh random inputs
  const at::Tensor palette = palette_of_bytes(6, random);
  const PatchBook book = random_book(random, 4, 5, 3, 6, 40);
  for (int damage : {0, 2, 5}) {
    at::Tensor frames = frames_of_book(book, palette, 3, damage, random);
    // Off-palette noise on one frame: bytes that are no colour, some past [-1, 1].
    frames[2] += (at::rand_like(frames[2]) - 0.5) * 0.3;
    frames = frames.unsqueeze(0);  // [1, 3 frames, 3, H, W], as play's blocks
    // The frames before: the same book frames with other damage, so some cells hold.
    const at::Tensor before = frames_of_book(book, palette, 3, damage, random).unsqueeze(0);
    const at::Tensor mixed = at::where(at::rand({1, 3, 1, 1, 1}) < 0.5, before, frames);
    for (const auto& [max_changed, fixed_max_changed] :
         std::vector<std::pair<int, int>>{{0, 0}, {3, 16}, {8, 2}, {16, 16}}) {
      for (int hold : {0, 3, 16}) {
        const PatchSnapLimits limits{max_changed, fixed_max_changed, hold % 3, hold};
        const PatchSnap snap(book, palette, limits, at::kCPU, "book");
        const at::Tensor fast = snap.snap(frames, mixed);
        ASSERT_EQ(fast.sizes(), frames.sizes());
        EXPECT_TRUE(at::equal(fast, snap_patches_reference(frames, book, palette, limits, mixed)))
            << "damage " << damage << ", max_changed " << max_changed << ", fixed "
            << fixed_max_changed << ", hold " << hold;
        EXPECT_TRUE(
            at::equal(snap.snap(frames), snap_patches_reference(frames, book, palette, limits)));
      }
    }
  }
}

TEST(PatchSnap, BreaksTiesTowardTheFirstPatchAsTheLoopDoes) {
  // Two book patches one pixel from the frame's patch each: equally near.
  at::Tensor palette = at::tensor({-1.0f, -1.0f, -1.0f, 1.0f, 1.0f, 1.0f}).view({2, 3});
  PatchBook book;
  book.size = 2;
  book.frame_width = 2;
  book.frame_height = 2;
  book.colours = 2;
  book.patches = {{1, 0, 0, 0}, {0, 1, 0, 0}};
  book.cells = {{}, {}};
  const at::Tensor frame = at::full({1, 3, 2, 2}, -1.0f);
  const at::Tensor snapped = PatchSnap(book, palette, {1, 1, 0, 0}, at::kCPU, "book").snap(frame);
  EXPECT_TRUE(at::equal(snapped, snap_patches_reference(frame, book, palette, {1, 1, 0, 0})));
  EXPECT_EQ(snapped[0][0][0][0].item<float>(), 1.0f);  // the first patch's white pixel
  EXPECT_EQ(snapped[0][0][0][1].item<float>(), -1.0f);
}

TEST(PatchSnap, RepairsNearMissesLeavesFarOnesAndKeepsBoundPatchesHome) {
  // Black, white, green, blue, magenta: far apart, so that the nearest patches below are clear.
  const at::Tensor palette = at::tensor({0.f, 0.f, 0.f, 255.f, 255.f, 255.f, 98.f, 178.f, 74.f,
                                         46.f, 102.f, 204.f, 230.f, 72.f, 204.f})
                                     .view({5, 3}) /
                                 127.5 -
                             1.0;
  // Two solid patches anywhere, and a "sprite" (all colour 4) bound to cell 0 of a 2x1 grid.
  PatchBook book;
  book.size = 4;
  book.frame_width = 8;
  book.frame_height = 4;
  book.colours = 5;
  book.patches = {std::vector<uint8_t>(16, 0), std::vector<uint8_t>(16, 1),
                  std::vector<uint8_t>(16, 4)};
  book.cells = {{}, {}, {0}};
  const auto frame_of = [&](const std::vector<int>& left, const std::vector<int>& right) {
    at::Tensor index = at::zeros({4, 8}, at::kLong);
    for (int i = 0; i < 16; ++i) {
      index[i / 4][i % 4] = left[i];
      index[i / 4][4 + i % 4] = right[i];
    }
    return palette.index_select(0, index.flatten()).view({4, 8, 3}).permute({2, 0, 1});
  };
  std::vector<int> sprite(16, 4), damaged_sprite = sprite, far = std::vector<int>(16, 2);
  damaged_sprite[5] = 0;
  damaged_sprite[6] = 1;
  const PatchSnap snap(book, palette, {3, 3, 0, 0}, at::kCPU, "book");
  // A damaged sprite at home snaps back; the same damage one cell over has no sprite to snap to.
  const at::Tensor home = snap.snap(frame_of(damaged_sprite, far));
  EXPECT_TRUE(at::equal(home, frame_of(sprite, far)));
  const at::Tensor away = snap.snap(frame_of(far, damaged_sprite));
  EXPECT_TRUE(at::equal(away, frame_of(far, damaged_sprite)));
  // More damage than max_changed is left as drawn, unless the cell's own (screen-fixed) limit
  // allows it; the cell next door keeps the world's limit.
  std::vector<int> ruined = sprite;
  for (int i = 0; i < 4; ++i) ruined[i] = 0;
  EXPECT_TRUE(at::equal(snap.snap(frame_of(ruined, far)), frame_of(ruined, far)));
  const PatchSnap always_home(book, palette, {3, 16, 0, 0}, at::kCPU, "book");
  EXPECT_TRUE(at::equal(always_home.snap(frame_of(ruined, ruined)), frame_of(sprite, ruined)));
  // A screen-fixed cell holds the frame before's patch while it explains the drawn one within
  // the hold (here the sprite with one pixel of colour 0: a pose the book does not have), and
  // lets the nearest patch in when it explains it better by more.
  std::vector<int> pose = sprite;
  pose[9] = 0;
  std::vector<int> drawn = pose;
  drawn[10] = 1;  // one pixel from the pose, two from the sprite
  const PatchSnap holding(book, palette, {3, 16, 0, 1}, at::kCPU, "book");
  EXPECT_TRUE(
      at::equal(holding.snap(frame_of(drawn, far), frame_of(pose, far)), frame_of(pose, far)));
  EXPECT_TRUE(
      at::equal(holding.snap(frame_of(sprite, far), frame_of(ruined, far)), frame_of(sprite, far)));
  // A world cell holds the frame before's patch against a drawn one a stray pixel from it that is
  // no book patch; a drawn book patch is always taken.
  std::vector<int> stray = far, solid(16, 1), dotted(16, 1);
  stray[3] = 3;
  dotted[7] = 2;
  const PatchSnap world_holding(book, palette, {0, 16, 1, 0}, at::kCPU, "book");
  EXPECT_TRUE(at::equal(world_holding.snap(frame_of(sprite, stray), frame_of(sprite, far)),
                        frame_of(sprite, far)));
  EXPECT_TRUE(at::equal(world_holding.snap(frame_of(sprite, solid), frame_of(sprite, dotted)),
                        frame_of(sprite, solid)));
  // bfloat16 in, bfloat16 out.
  const at::Tensor half = snap.snap(frame_of(damaged_sprite, far).to(at::kBFloat16));
  EXPECT_EQ(half.scalar_type(), at::kBFloat16);
  EXPECT_TRUE(at::equal(half, frame_of(sprite, far).to(at::kBFloat16)));
}

TEST(PatchSnap, RefusesAnotherFrameSizeAndABookBeyondThePalette) {
  std::mt19937 random(5);
  const at::Tensor palette = palette_of_bytes(4, random);
  const PatchBook book = random_book(random, 4, 2, 2, 4, 5);
  const PatchSnap snap(book, palette, {2, 2, 0, 0}, at::kCPU, "cfg.json");
  try {
    snap.snap(at::zeros({1, 3, 8, 12}));
    ADD_FAILURE() << "no error";
  } catch (const Error& error) {
    EXPECT_THAT(error.what(), HasSubstr("cfg.json: the patch book is of 8x8 RGB frames"));
  }
  EXPECT_THROW(PatchSnap(book, palette.slice(0, 0, 3), {2, 2, 0, 0}, at::kCPU, "cfg.json"), Error);
}

}  // namespace
}  // namespace wc::model
