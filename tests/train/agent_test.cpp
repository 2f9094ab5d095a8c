// The exploring agent: deterministic, turns along walls, and walks back over its own path.
#include <gtest/gtest.h>

#include "engine/game/game.h"
#include "engine/train/exploring_agent.h"

namespace wc::train {
namespace {

using game::Action;

std::vector<Action> play(uint64_t seed, int frames, game::Game& g) {
  ExploringAgent agent(seed);
  std::vector<Action> actions;
  for (int i = 0; i < frames; ++i) {
    actions.push_back(agent.next(g));
    g.step(actions.back());
  }
  return actions;
}

TEST(ExploringAgent, SameSeedSameWalk) {
  game::Game a({64, 64, 7, false}), b({64, 64, 7, false});
  EXPECT_EQ(play(3, 500, a), play(3, 500, b));
  game::Game c({64, 64, 7, false});
  EXPECT_NE(play(4, 500, c), play(3, 500, a));
}

TEST(ExploringAgent, TurnsAlongWallsWhenBlocked) {
  int blocked = 0;
  for (uint64_t seed = 0; seed < 8; ++seed) {
    game::Game g({64, 64, seed, false});
    ExploringAgent agent(seed);
    Action last = Action::kNone;
    for (int i = 0; i < 2000; ++i) {
      const bool was_blocked = last != Action::kNone && !g.walking() && i > 0;
      const Action next = agent.next(g);
      if (was_blocked) {
        ++blocked;
        // Perpendicular to the blocked direction: never the same axis.
        const bool last_vertical = last == Action::kUp || last == Action::kDown;
        const bool next_vertical = next == Action::kUp || next == Action::kDown;
        EXPECT_NE(next, Action::kNone);
        EXPECT_NE(last_vertical, next_vertical) << "frame " << i;
      }
      g.step(next);
      last = next;
    }
  }
  EXPECT_GT(blocked, 0) << "the worlds should have walls to test against";
}

TEST(ExploringAgent, LeansOnTheKeyAgainstAShareOfObstacles) {
  // Per style: frames whose last move was blocked, and of those, the ones the agent kept pushing.
  const auto count = [](double push_share) {
    AgentStyle style;
    style.return_share = 0.0;
    style.push_share = push_share;
    std::pair<int, int> blocked_pushed{0, 0};
    for (uint64_t seed = 0; seed < 8; ++seed) {
      game::Game g({64, 64, seed + 40, false});
      ExploringAgent agent(seed, style);
      Action last = Action::kNone;
      for (int i = 0; i < 2000; ++i) {
        const bool was_blocked = last != Action::kNone && !g.walking() && i > 0;
        const Action next = agent.next(g);
        if (was_blocked) {
          ++blocked_pushed.first;
          if (next == last) ++blocked_pushed.second;
        }
        g.step(next);
        last = next;
      }
    }
    return blocked_pushed;
  };
  const auto [blocked_turning, pushed_turning] = count(0.0);
  const auto [blocked_leaning, pushed_leaning] = count(1.0);
  const auto [blocked_half, pushed_half] = count(0.5);
  ASSERT_GT(blocked_turning, 0) << "the worlds should have walls to test against";
  EXPECT_EQ(pushed_turning, 0) << "wall following never pushes on";
  // Leaning holds the key until the hold ends: most blocked frames push again, and there are
  // more of them; at half, some obstacles lean and some turn.
  EXPECT_GT(pushed_leaning, blocked_leaning / 2);
  EXPECT_GT(blocked_leaning, 2 * blocked_turning);
  EXPECT_GT(pushed_half, 0);
  EXPECT_LT(pushed_half, pushed_leaning);
}

TEST(ExploringAgent, ReturnTripsRevisitPlaces) {
  // With return trips on, the walk comes back to positions it left; count revisited tiles.
  AgentStyle returning;
  returning.return_share = 0.4;
  AgentStyle wandering;
  wandering.return_share = 0.0;
  const auto revisits = [](const AgentStyle& style) {
    int count = 0;
    for (uint64_t seed = 0; seed < 6; ++seed) {
      game::Game g({64, 64, seed + 100, false});
      ExploringAgent agent(seed, style);
      std::vector<std::pair<int, int>> seen;
      for (int i = 0; i < 1500; ++i) {
        g.step(agent.next(g));
        const std::pair<int, int> at{g.player_x(), g.player_y()};
        for (size_t j = 0; j + 30 < seen.size(); ++j) {
          if (seen[j] == at) {
            ++count;
            break;
          }
        }
        seen.push_back(at);
      }
    }
    return count;
  };
  EXPECT_GT(revisits(returning), revisits(wandering));
}

TEST(ExploringAgent, OppositeUndoesEachMove) {
  EXPECT_EQ(opposite(Action::kUp), Action::kDown);
  EXPECT_EQ(opposite(Action::kLeft), Action::kRight);
  EXPECT_EQ(opposite(Action::kNone), Action::kNone);
}

}  // namespace
}  // namespace wc::train
