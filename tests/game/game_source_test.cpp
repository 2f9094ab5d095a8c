// The reference game as a FrameSource plays exactly like engine/game.
#include "engine/rollout/game_source.h"

#include <gtest/gtest.h>

#include <cstring>

#include "engine/core/error.h"
#include "engine/game/game.h"
#include "engine/game/throughput.h"

namespace wc {
namespace {

bool same_frame(const FrameSource& source, const game::Game& game) {
  return std::memcmp(source.rgba(), game.frame().data(), game.frame().size()) == 0;
}

TEST(GameSource, BehavesLikeTheGame) {
  auto source = make_game_source(144, 112, 31);
  game::Game game(game::GameConfig{144, 112, 31});
  EXPECT_EQ(source->name(), "game");
  EXPECT_EQ(source->width(), 144);
  EXPECT_EQ(source->height(), 112);
  EXPECT_EQ(source->frame_index(), 0u);
  ASSERT_TRUE(same_frame(*source, game));
  for (int64_t i = 0; i < 300; ++i) {
    source->step(game::throughput_action(i));
    game.step(game::throughput_action(i));
    ASSERT_TRUE(same_frame(*source, game)) << "frame " << i;
  }
  EXPECT_EQ(source->frame_index(), 300u);

  source->reset(32);
  game.reset(32);
  EXPECT_EQ(source->frame_index(), 0u);
  EXPECT_TRUE(same_frame(*source, game));
  EXPECT_FALSE(same_frame(*source, game::Game(game::GameConfig{144, 112, 31})));
}

TEST(GameSource, RejectsBadSizesWithAnError) {
  EXPECT_THROW(make_game_source(0, 128, 1), Error);
  EXPECT_THROW(make_game_source(128, 100000, 1), Error);
}

}  // namespace
}  // namespace wc
