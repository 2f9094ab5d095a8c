// The benchmark runs what it says (never asserts timings: see STYLE.md).
#include "engine/game/throughput.h"

#include <gtest/gtest.h>

#include <set>
#include <stdexcept>

#include "engine/game/game.h"
#include "engine/game/hash.h"

namespace wc::game {
namespace {

TEST(GameThroughput, StepsTheRequestedFramesWithTheDocumentedActions) {
  const ThroughputResult result = measure_throughput({300, 96, 80, 4});
  EXPECT_EQ(result.frames, 300);
  EXPECT_EQ(result.width, 96);
  EXPECT_EQ(result.height, 80);
  EXPECT_GT(result.frames_per_second, 0.0);
  Game game(GameConfig{96, 80, 4});
  for (int64_t i = 0; i < 300; ++i) game.step(throughput_action(i));
  EXPECT_EQ(result.last_frame_hash, hash_bytes(game.frame().data(), game.frame().size()));
  EXPECT_EQ(result.crystals_collected, game.crystals_collected());
}

TEST(GameThroughput, ActionPatternUsesEveryDirection) {
  std::set<Action> seen;
  for (int64_t i = 0; i < 24 * 64; ++i) seen.insert(throughput_action(i));
  EXPECT_EQ(seen.size(), 5u);
  EXPECT_EQ(throughput_action(0), throughput_action(23));  // runs of 24 frames
}

TEST(GameThroughput, RejectsNoFrames) {
  EXPECT_THROW(measure_throughput({0, 128, 128, 0}), std::invalid_argument);
}

}  // namespace
}  // namespace wc::game
