// Phase correlation recovers known shifts of textured images exactly (circular and cropped
// shifts), maps shifts to camera directions, and reads the reference game's scrolling right.
#include <gtest/gtest.h>

#include "engine/core/error.h"
#include "engine/eval/frame_tensor.h"
#include "engine/eval/phase_correlation.h"
#include "engine/eval/player_actions.h"
#include "engine/eval/reference_run.h"
#include "engine/game/game.h"

namespace wc::eval {
namespace {

using game::Action;

// A random texture, uint8 [H, W, 4].
at::Tensor texture(int height, int width, uint64_t seed) {
  at::manual_seed(seed);
  // 4x4 blocks of random colour (edges like the game's tiles) plus fine noise.
  const at::Tensor coarse = at::rand({3, height / 4, width / 4}, at::kDouble) * 255;
  const at::Tensor fine = at::rand({3, height, width}, at::kDouble) * 64;
  const at::Tensor rgb =
      (coarse.repeat_interleave(4, 1).repeat_interleave(4, 2) * 0.75 + fine).clamp(0, 255);
  at::Tensor frame = at::full({height, width, 4}, 255, at::kByte);
  frame.narrow(2, 0, 3).copy_(rgb.permute({1, 2, 0}).round());
  return frame;
}

TEST(PhaseCorrelation, RecoversCircularShiftsExactly) {
  const at::Tensor from = texture(64, 96, 1);
  PhaseCorrelationOptions options;
  options.hann = false;  // a circular shift is exactly what the unwindowed transform models
  for (auto [dx, dy] : {std::pair{0, 0}, std::pair{3, -5}, std::pair{-17, 9}, std::pair{2, 0},
                        std::pair{0, -2}, std::pair{40, 31}, std::pair{-47, -31}}) {
    const at::Tensor to = at::roll(from, {dy, dx}, {0, 1});
    const Shift shift = estimate_shift(from, to, options);
    EXPECT_EQ(shift.dx, dx);
    EXPECT_EQ(shift.dy, dy);
    // A perfect circular shift puts all energy in one bin; the removed mean (DC) is one of the
    // H·W frequencies missing from it.
    EXPECT_NEAR(shift.peak, 1.0 - 1.0 / (64 * 96), 1e-9);
  }
}

TEST(PhaseCorrelation, RecoversCroppedShiftsWithTheWindow) {
  // A camera over a larger world: content enters on one side and leaves on the other.
  const at::Tensor world = texture(192, 192, 2);
  const int x0 = 40, y0 = 50, size = 96;
  const at::Tensor from = world.narrow(0, y0, size).narrow(1, x0, size).contiguous();
  PhaseCorrelationOptions options;
  options.max_shift = 8;
  for (int dy = -6; dy <= 6; dy += 2) {
    for (int dx = -6; dx <= 6; dx += 3) {
      // The camera moves by (−dx, −dy), so content shifts by (dx, dy).
      const at::Tensor to = world.narrow(0, y0 - dy, size).narrow(1, x0 - dx, size).contiguous();
      const Shift shift = estimate_shift(from, to, options);
      EXPECT_EQ(shift.dx, dx) << "dy " << dy;
      EXPECT_EQ(shift.dy, dy) << "dx " << dx;
    }
  }
}

TEST(PhaseCorrelation, IdenticalAndFlatFramesGiveNoShift) {
  const at::Tensor a = texture(32, 32, 3);
  const Shift same = estimate_shift(a, a.clone());
  EXPECT_EQ(same.dx, 0);
  EXPECT_EQ(same.dy, 0);
  const at::Tensor flat = at::full({32, 32, 4}, 90, at::kByte);
  const Shift none = estimate_shift(flat, flat.clone());
  EXPECT_EQ(none.dx, 0);
  EXPECT_EQ(none.dy, 0);
}

TEST(PhaseCorrelation, MaxShiftBoundsTheSearch) {
  const at::Tensor from = texture(64, 64, 4);
  PhaseCorrelationOptions options;
  options.hann = false;
  options.max_shift = 4;
  const Shift shift = estimate_shift(from, at::roll(from, {0, 20}, {0, 1}), options);
  EXPECT_LE(std::abs(shift.dx), 4);
  EXPECT_LE(std::abs(shift.dy), 4);
  EXPECT_LT(shift.peak, 0.5);  // no true peak inside the bound
}

TEST(PhaseCorrelation, IgnoredOverlayDoesNotPinTheShiftToZero) {
  // A large static overlay (a third of the frame) over a scrolling world.
  const at::Tensor world = texture(160, 160, 5);
  const game::PixelRect overlay{20, 20, 56, 56};
  const auto framed = [&](int x, int y) {
    at::Tensor frame = world.narrow(0, y, 96).narrow(1, x, 96).clone();
    frame.narrow(0, overlay.y, overlay.height).narrow(1, overlay.x, overlay.width).fill_(200);
    return frame;
  };
  PhaseCorrelationOptions options;
  options.max_shift = 8;
  options.ignore = {overlay};
  const Shift shift = estimate_shift(framed(30, 30), framed(32, 30), options);  // camera right 2
  EXPECT_EQ(shift.dx, -2);
  EXPECT_EQ(shift.dy, 0);
}

TEST(PhaseCorrelation, CameraDirection) {
  EXPECT_EQ(camera_direction({-2, 0, 1}), Action::kRight);
  EXPECT_EQ(camera_direction({2, 0, 1}), Action::kLeft);
  EXPECT_EQ(camera_direction({0, -2, 1}), Action::kDown);
  EXPECT_EQ(camera_direction({0, 2, 1}), Action::kUp);
  EXPECT_EQ(camera_direction({-3, 1, 1}), Action::kRight);
  EXPECT_EQ(camera_direction({0, 0, 1}), Action::kNone);
  EXPECT_EQ(camera_direction({2, -2, 1}), Action::kNone);
  for (Action a : {Action::kNone, Action::kUp, Action::kDown, Action::kLeft, Action::kRight}) {
    EXPECT_EQ(camera_direction(content_shift_of(a, 2)), a);
  }
}

TEST(PhaseCorrelation, RejectsMismatchedFrames) {
  EXPECT_THROW(estimate_shift(texture(32, 32, 6), texture(32, 36, 6)), Error);
}

// The estimator on the true game: every step where the camera moved scrolls by exactly the
// player's speed in the commanded direction, sprite and HUD left out.
TEST(PhaseCorrelation, ReadsTheReferenceGameScroll) {
  const game::Game layout(game::GameConfig{128, 128, 0, true});
  PhaseCorrelationOptions options;
  options.max_shift = 8;
  options.ignore = {layout.player_rect(), layout.hud_rect()};
  int moved = 0, exact = 0, idle = 0, idle_still = 0;
  for (uint64_t seed : {1000000ull, 1000001ull, 1000002ull}) {
    ReferenceRun run(128, 128, seed, 1);
    at::Tensor previous = run.frame();
    for (Action action : player_actions(seed, 200)) {
      const bool walked = run.step(action);
      const at::Tensor frame = run.frame();
      const Shift shift = estimate_shift(previous, frame, options);
      if (walked) {
        ++moved;
        const Shift expected = content_shift_of(action, game::kPlayerSpeed);
        exact += shift.dx == expected.dx && shift.dy == expected.dy;
      } else if (action == Action::kNone) {
        ++idle;
        idle_still += shift.dx == 0 && shift.dy == 0;
      }
      previous = frame;
    }
  }
  ASSERT_GT(moved, 250);
  EXPECT_EQ(exact, moved);
  EXPECT_EQ(idle_still, idle);
}

}  // namespace
}  // namespace wc::eval
