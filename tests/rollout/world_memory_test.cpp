// rollout::WorldMemory (Note [World memory]): on walks through fresh random worlds it finds every
// step, keeps the view where the walk took it, and its ring shows exactly the world pixels the
// walk saw and nothing else (a loop over pixels is the reference); a screen-fixed overlay is
// never written into the world; still frames and frames that are no scroll move nothing; past its
// cap it forgets the oldest ground and keeps the newest; a short memory forgets a cell its age
// after the cell was first written; on the real game it follows the camera
// and the ring on the way back is the ground seen on the way out; bad sizes are refused.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <set>
#include <utility>

#include "engine/game/game.h"
#include "engine/rollout/decode.h"
#include "engine/rollout/world_memory.h"
#include "tests/model/model_test_util.h"

namespace wc::rollout {
namespace {

using ::testing::HasSubstr;

constexpr int kMove = 4;
constexpr int kView = 16;  // frames of 16 x 16: four moves each way
constexpr int kChannels = 3;

// A world of random bytes, [C, side, side] in [−1, 1] (as the memory stores them: v = b/127.5 − 1).
at::Tensor random_world(int side, uint64_t seed) {
  at::manual_seed(seed);
  return at::randint(0, 256, {kChannels, side, side}, at::kFloat) / 127.5 - 1.0;
}

at::Tensor view_of(const at::Tensor& world, int64_t y, int64_t x) {
  return world.slice(1, y, y + kView).slice(2, x, x + kView).contiguous();
}

// A move's offset in world pixels, in the memory's order (1 up, 2 down, 3 left, 4 right).
std::pair<int64_t, int64_t> offset_of(int move) {
  const int64_t table[5][2] = {{0, 0}, {-kMove, 0}, {kMove, 0}, {0, -kMove}, {0, kMove}};
  return {table[move][0], table[move][1]};
}

// A random walk of `steps` moves (some of them standing) that stays inside a world of `side`.
std::vector<int> random_walk(int steps, int side, int64_t start_y, int64_t start_x, uint64_t seed) {
  std::mt19937_64 random(seed);
  std::vector<int> walk;
  int64_t y = start_y, x = start_x;
  while (static_cast<int>(walk.size()) < steps) {
    const int move = static_cast<int>(random() % 5);
    const auto [dy, dx] = offset_of(move);
    if (y + dy < kMove || x + dx < kMove || y + dy + kView > side - kMove ||
        x + dx + kView > side - kMove) {
      continue;  // keep the ring inside the world
    }
    y += dy;
    x += dx;
    walk.push_back(move);
  }
  return walk;
}

TEST(WorldMemory, ARandomWalkIsFollowedAndTheRingShowsExactlyWhatWasSeen) {
  for (const uint64_t seed : {1u, 2u, 3u}) {
    const int side = 64;
    const at::Tensor world = random_world(side, seed);
    WorldMemory memory(kView, kView, kChannels, kMove);
    int64_t y = 24, x = 24;  // the view's corner in the world; the memory counts from 0
    const int64_t start_y = y, start_x = x;
    // Reference: every world pixel that has been in a view.
    std::set<std::pair<int64_t, int64_t>> seen;
    const auto see = [&] {
      for (int64_t i = 0; i < kView; ++i) {
        for (int64_t j = 0; j < kView; ++j) seen.insert({y + i, x + j});
      }
    };
    see();
    for (const int move : random_walk(60, side, y, x, seed)) {
      const at::Tensor before = view_of(world, y, x);
      const auto [dy, dx] = offset_of(move);
      y += dy;
      x += dx;
      const at::Tensor after = view_of(world, y, x);
      ASSERT_EQ(memory.observe(before, after), move);
      ASSERT_EQ(memory.view_y(), y - start_y);
      ASSERT_EQ(memory.view_x(), x - start_x);

      const at::Tensor around = memory.surround(after);
      ASSERT_EQ(around.sizes(),
                (std::vector<int64_t>{kChannels, kView + 2 * kMove, kView + 2 * kMove}));
      EXPECT_TRUE(
          at::equal(around.slice(1, kMove, kMove + kView).slice(2, kMove, kMove + kView), after));
      for (int64_t i = 0; i < kView + 2 * kMove; ++i) {
        for (int64_t j = 0; j < kView + 2 * kMove; ++j) {
          const bool ring = i < kMove || j < kMove || i >= kMove + kView || j >= kMove + kView;
          if (!ring) continue;
          const int64_t wy = y - kMove + i, wx = x - kMove + j;
          const bool known = !std::isnan(around[0][i][j].item<float>());
          ASSERT_EQ(known, seen.count({wy, wx}) > 0) << "ring pixel " << i << "," << j;
          for (int c = 0; c < kChannels && known; ++c) {
            ASSERT_NEAR(around[c][i][j].item<float>(), world[c][wy][wx].item<float>(), 1e-6);
          }
        }
      }
      see();
    }
  }
}

TEST(WorldMemory, AScreenFixedOverlayIsNeverWrittenIntoTheWorld) {
  const at::Tensor world = random_world(64, 7);
  // A 4 x 4 sprite in the view's top-left corner, drawn over every frame.
  const at::Tensor sprite = at::full({kChannels, kMove, kMove}, 1.0f);
  const auto shown = [&](int64_t y, int64_t x) {
    at::Tensor frame = view_of(world, y, x);
    frame.slice(1, 0, kMove).slice(2, 0, kMove).copy_(sprite);
    return frame;
  };
  WorldMemory memory(kView, kView, kChannels, kMove);
  ASSERT_EQ(memory.observe(shown(24, 24), shown(24, 28)), 4);  // one step right
  const at::Tensor around = memory.surround(shown(24, 28));
  // The left ring: rows 0-3 of the pushed-out strip were the sprite, not ground.
  const at::Tensor left = around.slice(2, 0, kMove).slice(1, kMove, kMove + kView);
  EXPECT_TRUE(at::isnan(left.slice(1, 0, kMove)).all().item<bool>());
  EXPECT_TRUE(
      at::allclose(left.slice(1, kMove), world.slice(1, 24 + kMove, 24 + kView).slice(2, 24, 28)));
}

TEST(WorldMemory, StillFramesAndFramesThatAreNoScrollMoveNothing) {
  const at::Tensor world = random_world(64, 11);
  WorldMemory memory(kView, kView, kChannels, kMove);
  const at::Tensor frame = view_of(world, 24, 24);
  EXPECT_EQ(memory.observe(frame, frame), 0);
  EXPECT_EQ(memory.observe(frame, view_of(random_world(64, 12), 24, 24)), 0);  // all new
  EXPECT_EQ(memory.cells(), 0);
  EXPECT_EQ(memory.view_y(), 0);
  EXPECT_EQ(memory.view_x(), 0);
  EXPECT_TRUE(at::isnan(memory.surround(frame).slice(2, 0, kMove)).all().item<bool>());
}

TEST(WorldMemory, PastItsCapItForgetsTheOldestGroundAndKeepsTheNewest) {
  const int side = 16 + kMove * 40;
  const at::Tensor world = random_world(side, 5);
  WorldMemory memory(kView, kView, kChannels, kMove, /*max_cells=*/12);
  int64_t x = 0;
  for (int step = 0; step < 36; ++step) {  // a long walk right along the top rows
    ASSERT_EQ(memory.observe(view_of(world, 0, x), view_of(world, 0, x + kMove)), 4);
    x += kMove;
    ASSERT_LE(memory.cells(), memory.max_cells());
  }
  // The strip just left behind is the newest ground, and still there.
  const at::Tensor around = memory.surround(view_of(world, 0, x));
  EXPECT_TRUE(at::allclose(around.slice(2, 0, kMove).slice(1, kMove, kMove + kView),
                           world.slice(1, 0, kView).slice(2, x - kMove, x)));
  // Walking all the way back finds the start forgotten: its ground left the cap long ago.
  for (int step = 0; step < 35; ++step) {
    memory.observe(view_of(world, 0, x), view_of(world, 0, x - kMove));
    x -= kMove;
  }
  EXPECT_TRUE(
      at::isnan(memory.surround(view_of(world, 0, x)).slice(2, 0, kMove)).all().item<bool>());
}

// A short memory forgets a cell max_age_frames after its first write, even when a return
// wrote it again in between; a lasting one keeps it.
TEST(WorldMemory, AShortMemoryForgetsACellItsAgeAfterItWasFirstWritten) {
  const at::Tensor world = random_world(64, 9);
  const int64_t age = 8;
  WorldMemory lasting(kView, kView, kChannels, kMove);
  WorldMemory short_memory(kView, kView, kChannels, kMove, WorldMemory::kDefaultMaxCells, age);
  const at::Tensor home = view_of(world, 24, 24), right = view_of(world, 24, 28);
  const auto left_ring = [&](const WorldMemory& memory) {
    return memory.surround(right).slice(2, 0, kMove).slice(1, kMove, kMove + kView);
  };
  const at::Tensor left_strip = world.slice(1, 24, 24 + kView).slice(2, 24, 28);
  // Frame 1 writes the left strip; frames 2 and 3 walk back and out again, writing it anew.
  const std::vector<std::pair<at::Tensor, at::Tensor>> walk = {
      {home, right}, {right, home}, {home, right}};
  for (WorldMemory* memory : {&lasting, &short_memory}) {
    for (const auto& [before, after] : walk) memory->observe(before, after);
  }
  int64_t frame = 3;
  for (; frame < age; ++frame) {  // still frames up to the strip's last frame
    short_memory.observe(right, right);
    lasting.observe(right, right);
  }
  EXPECT_TRUE(at::allclose(left_ring(short_memory), left_strip));
  short_memory.observe(right, right);  // frame `age` + 1: `age` frames after frame 1
  lasting.observe(right, right);
  EXPECT_TRUE(at::isnan(left_ring(short_memory)).all().item<bool>());
  EXPECT_TRUE(at::allclose(left_ring(lasting), left_strip));
  // What is forgotten is written again by the next scroll, and lasts its age from then.
  short_memory.observe(right, home);
  short_memory.observe(home, right);
  EXPECT_TRUE(at::allclose(left_ring(short_memory), left_strip));
}

TEST(WorldMemory, OnTheGameItFollowsTheCameraAndTheWayBackShowsTheWayOut) {
  game::GameConfig config;
  config.seed = 1000003;
  game::Game game(config);
  const auto frame = [&] { return encode_rgba(game.frame().data(), game.width(), game.height()); };
  constexpr int m = game::kPlayerSpeed;
  WorldMemory memory(game.height(), game.width(), 3, m);
  const int camera_y = game.camera_y(), camera_x = game.camera_x();
  int moved = 0;
  at::Tensor before = frame();
  const auto step = [&](game::Action action) {
    game.step(action);
    const at::Tensor after = frame();
    const int found = memory.observe(before, after);
    EXPECT_EQ(found, game.walking() ? static_cast<int>(action) : 0);
    EXPECT_EQ(memory.view_y(), game.camera_y() - camera_y);
    EXPECT_EQ(memory.view_x(), game.camera_x() - camera_x);
    moved += game.walking();
    before = after;
    return after;
  };
  const std::vector<game::Action> out = {game::Action::kRight, game::Action::kRight,
                                         game::Action::kDown,  game::Action::kRight,
                                         game::Action::kDown,  game::Action::kRight};
  std::vector<game::Action> walked;
  for (const game::Action a : out) {
    step(a);
    if (game.walking()) walked.push_back(a);
  }
  // The way back, checking each step's far ring against the strip that step pushed out.
  for (auto it = walked.rbegin(); it != walked.rend(); ++it) {
    const game::Action back = *it == game::Action::kRight ? game::Action::kLeft : game::Action::kUp;
    const at::Tensor leaving = before;
    const at::Tensor after = step(back);
    if (!game.walking()) continue;
    const at::Tensor around = memory.surround(after);
    const int64_t h = game.height(), w = game.width();
    // Walking left pushes out the right strip, walking up the bottom one.
    const at::Tensor ring = back == game::Action::kLeft ? around.slice(1, m, m + h).slice(2, m + w)
                                                        : around.slice(1, m + h).slice(2, m, m + w);
    const at::Tensor strip =
        back == game::Action::kLeft ? leaving.slice(2, w - m) : leaving.slice(1, h - m);
    const at::Tensor known = at::isnan(ring).logical_not();
    EXPECT_GT(known.to(at::kFloat).mean().item<double>(), 0.9);  // all but sprite and HUD
    EXPECT_TRUE(at::allclose(at::where(known, ring, strip), strip, 0.0, 1e-5))
        << (at::where(known, ring, strip) - strip).abs().gt(1e-5).sum().item<int64_t>() << " of "
        << strip.numel();
  }
  EXPECT_GE(moved, 8) << "the walk in seed " << config.seed << " was blocked; choose another";
  EXPECT_EQ(memory.view_y(), 0);
  EXPECT_EQ(memory.view_x(), 0);
}

TEST(WorldMemory, BadSizesAreRefused) {
  EXPECT_THAT(testing::error_of([] { WorldMemory(18, 16, 3, 4); }), HasSubstr("whole number"));
  EXPECT_THAT(testing::error_of([] { WorldMemory(4, 16, 3, 4); }), HasSubstr("whole number"));
  EXPECT_THAT(testing::error_of([] { WorldMemory(16, 16, 3, 4, 0); }), HasSubstr("max_cells"));
  EXPECT_THAT(testing::error_of([] { WorldMemory(16, 16, 3, 4, 8, -1); }),
              HasSubstr("max_age_frames"));
  WorldMemory memory(kView, kView, kChannels, kMove);
  const at::Tensor frame = at::zeros({kChannels, kView, kView});
  EXPECT_THAT(testing::error_of([&] {
                memory.observe(frame, at::zeros({kChannels, kView, 8}));
              }),
              HasSubstr("world memory"));
  EXPECT_THAT(testing::error_of([&] {
                memory.surround(at::zeros({1, kView, kView}));
              }),
              HasSubstr("world memory"));
}

}  // namespace
}  // namespace wc::rollout
