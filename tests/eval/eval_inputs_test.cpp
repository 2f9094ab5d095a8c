// The eval's inputs: player-like action sequences and the reference run that mirrors Session
// seeding, plus the game dressed as a model.
#include <gtest/gtest.h>

#include <cstring>

#include "engine/core/error.h"
#include "engine/eval/eval_options.h"
#include "engine/eval/frame_tensor.h"
#include "engine/eval/game_as_model.h"
#include "engine/eval/player_actions.h"
#include "engine/eval/reference_run.h"
#include "engine/game/game.h"

namespace wc::eval {
namespace {

using game::Action;

TEST(PlayerActions, DeterministicHeldAndMixed) {
  const auto a = player_actions(42, 5000);
  EXPECT_EQ(a, player_actions(42, 5000));
  EXPECT_NE(a, player_actions(43, 5000));
  ASSERT_EQ(a.size(), 5000u);
  int counts[game::kActionCount] = {};
  for (Action action : a) ++counts[static_cast<int>(action)];
  for (int i = 1; i < game::kActionCount; ++i) EXPECT_GT(counts[i], 700) << i;
  EXPECT_GT(counts[0], 200);
  EXPECT_LT(counts[0], 1400);
  // Runs of one action are whole holds (>= min_hold) except where two holds chose the same
  // action back to back, so the shortest run is at least min_hold apart from the last one.
  size_t run = 1, shortest = 1000;
  for (size_t i = 1; i < a.size(); ++i) {
    if (a[i] == a[i - 1]) {
      ++run;
    } else {
      shortest = std::min(shortest, run);
      run = 1;
    }
  }
  EXPECT_GE(shortest, 4u);
}

TEST(PlayerActions, RejectsBadOptions) {
  PlayerActionOptions bad;
  bad.min_hold = 5;
  bad.max_hold = 4;
  EXPECT_THROW(player_actions(1, 10, bad), Error);
  EXPECT_THROW(player_actions(1, -1), Error);
  EXPECT_TRUE(player_actions(1, 0).empty());
}

TEST(ReferenceRun, MirrorsSessionSeeding) {
  ReferenceRun run(64, 48, 1000003, 3);
  game::Game game(game::GameConfig{64, 48, 1000003, true});
  game.step(Action::kNone);
  game.step(Action::kNone);
  EXPECT_EQ(std::memcmp(run.frame().data_ptr<uint8_t>(), game.frame().data(), game.frame().size()),
            0);
  EXPECT_EQ(run.game().frame_index(), 2u);
  EXPECT_THROW(ReferenceRun(64, 48, 1, 0), Error);
}

TEST(ReferenceRun, ReportsMovesAndPredictsWalks) {
  ReferenceRun run(128, 128, 1000000, 1);
  // The spawn's 3x3 neighbourhood is walkable: one step in every direction works.
  for (Action a : {Action::kUp, Action::kDown, Action::kLeft, Action::kRight}) {
    EXPECT_TRUE(run.can_walk(a, 1));
  }
  EXPECT_FALSE(run.step(Action::kNone));
  const bool can = run.can_walk(Action::kRight, 3);
  EXPECT_EQ(run.game().frame_index(), 1u);  // asking walks a copy
  bool all = true;
  for (int i = 0; i < 3; ++i) all = run.step(Action::kRight) && all;
  EXPECT_EQ(all, can);
  // Walking far into one direction is blocked somewhere in almost every world; what matters is
  // that can_walk agrees with stepping.
  ReferenceRun far(128, 128, 1000001, 1);
  const bool predicted = far.can_walk(Action::kUp, 400);
  bool walked = true;
  for (int i = 0; i < 400; ++i) walked = far.step(Action::kUp) && walked;
  EXPECT_EQ(predicted, walked);
}

TEST(GameAsModel, IsSeededLikeASession) {
  auto source = make_game_as_model(64, 64, 2, 1000004);
  ReferenceRun truth(64, 64, 1000004, 2);
  EXPECT_EQ(source->frame_index(), 0u);
  for (Action a : {Action::kNone, Action::kRight, Action::kRight, Action::kDown}) {
    source->step(a);
    truth.step(a);
    EXPECT_TRUE(at::equal(copy_rgba(source->rgba(), 64, 64), truth.frame()));
  }
  source->reset(1000004);
  EXPECT_EQ(source->frame_index(), 0u);
  EXPECT_TRUE(
      at::equal(copy_rgba(source->rgba(), 64, 64), ReferenceRun(64, 64, 1000004, 2).frame()));
}

TEST(EvalOptions, ParsesMetricLists) {
  EXPECT_EQ(parse_metrics("all").size(), 7u);
  const auto some = parse_metrics("idle,speed,idle,world");
  ASSERT_EQ(some.size(), 3u);
  EXPECT_EQ(some[0], Metric::kIdle);
  EXPECT_EQ(some[1], Metric::kSpeed);
  EXPECT_EQ(some[2], Metric::kWorld);
  try {
    parse_metrics("idle,fidelity");
    FAIL() << "no error";
  } catch (const Error& error) {
    EXPECT_NE(std::string(error.what()).find("unknown metric 'fidelity'"), std::string::npos);
  }
}

}  // namespace
}  // namespace wc::eval
