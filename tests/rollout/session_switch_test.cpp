// Live policy switching in a running Session (Note [Policy switch]): switching to the same
// policy and settings reproduces the next frames bit for bit, a switch keeps the game going, a
// bad switch changes nothing, and live settings survive reset().
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "engine/rollout/session.h"
#include "tests/model/model_test_util.h"

namespace wc::rollout {
namespace {

using ::testing::HasSubstr;

std::vector<uint8_t> frame_of(const Session& s) {
  return std::vector<uint8_t>(s.rgba(), s.rgba() + s.width() * s.height() * 4);
}

std::unique_ptr<Session> make(const std::string& policy, const nlohmann::json& settings,
                              int context_blocks = 6, uint64_t seed = 5) {
  SessionOptions options;
  options.context_blocks = context_blocks;
  return Session::create(testing::tiny_config(), "", policy, settings, seed, at::kCPU, options);
}

// Frames under a fixed varied script, starting at script position `from`.
std::vector<std::vector<uint8_t>> play(Session& s, int frames, int from = 0) {
  static const Action kCycle[] = {Action::kRight, Action::kUp,   Action::kRight, Action::kNone,
                                  Action::kLeft,  Action::kDown, Action::kDown};
  std::vector<std::vector<uint8_t>> out;
  for (int i = 0; i < frames; ++i) {
    s.step(kCycle[(from + i) % 7]);
    out.push_back(frame_of(s));
  }
  return out;
}

TEST(SessionSwitch, SameDensePolicyReproducesTheNextFramesWithinTheContext) {
  // dense with a 7-frame window; 4 generated blocks + the seed block fit the kept context.
  const nlohmann::json settings = {{"window", 7}};
  auto a = make("dense", settings);
  auto b = make("dense", settings);
  play(*a, 4);
  play(*b, 4);
  a->switch_policy("dense", settings);
  EXPECT_EQ(a->stats().context_blocks, 5);
  EXPECT_EQ(a->frame_index(), 4u);
  const auto after_switch = play(*a, 6, 4);
  const auto without = play(*b, 6, 4);
  EXPECT_EQ(after_switch, without);
  EXPECT_NE(after_switch[0], after_switch[5]);  // the game does move
}

TEST(SessionSwitch, AllContextKeptReproducesDensePastItsWindow) {
  // 12 blocks roll through a 4-frame window; keeping every block replays its history exactly.
  const nlohmann::json settings = {{"window", 4}};
  auto a = make("dense", settings, /*context_blocks=*/-1);
  auto b = make("dense", settings, -1);
  play(*a, 12);
  play(*b, 12);
  a->switch_policy("dense", settings);
  EXPECT_EQ(a->stats().context_blocks, 13);
  EXPECT_EQ(play(*a, 5, 12), play(*b, 5, 12));
}

TEST(SessionSwitch, SameTempCacheReproducesTheNextFrames) {
  const nlohmann::json settings = {{"tau", 0.5}};
  auto a = make("tempcache", settings);
  auto b = make("tempcache", settings);
  play(*a, 3);
  play(*b, 3);
  a->switch_policy("tempcache", settings);
  EXPECT_EQ(play(*a, 4, 3), play(*b, 4, 3));
}

TEST(SessionSwitch, SwitchKeepsTheGameAndTheNewPolicyCasts) {
  auto s = make("dense", {{"window", 7}});
  const auto before = play(*s, 5);
  s->switch_policy("headcast", {{"window", 3}});
  EXPECT_EQ(s->policy_name(), "headcast");
  EXPECT_EQ(s->frame_index(), 5u);
  EXPECT_EQ(frame_of(*s), before.back());  // the shown frame is untouched
  const SessionStats stats = s->stats();
  EXPECT_EQ(stats.policy.policy, "headcast");
  EXPECT_EQ(stats.policy.blocks_committed, 6);  // seed block + 5: positions kept
  EXPECT_GT(stats.policy.total_tokens(), 0);    // the context is in its caches
  // The context holds more than its 3-frame window: it cast during the re-commit.
  EXPECT_TRUE(stats.policy.classified);
  play(*s, 2, 5);
  EXPECT_EQ(s->frame_index(), 7u);

  // With a context shorter than the window it warms up first, as from a reset.
  auto t = make("dense", {{"window", 7}}, /*context_blocks=*/1);
  play(*t, 5);
  t->switch_policy("headcast", {{"window", 4}});
  EXPECT_EQ(t->stats().context_blocks, 2);
  EXPECT_FALSE(t->stats().policy.classified);
  play(*t, 4, 5);
  EXPECT_TRUE(t->stats().policy.classified);
}

TEST(SessionSwitch, EverySelectablePolicyTakesOverARunningGame) {
  for (const std::string name : {"dense", "headcast", "dummy", "tempcache", "combined"}) {
    // 12 blocks: the kept context (first block + 6) has a gap the new policy never sees.
    auto s = make("headcast", {{"window", 3}});
    play(*s, 12);
    s->switch_policy(name, nlohmann::json::object());
    EXPECT_EQ(s->stats().policy.blocks_committed, 7) << name;
    play(*s, 3, 12);
    EXPECT_EQ(s->frame_index(), 15u) << name;
    EXPECT_EQ(s->stats().policy.policy.empty(), false) << name;
    EXPECT_GT(s->stats().policy.total_tokens(), 0) << name;
  }
}

TEST(SessionSwitch, BadSwitchLeavesTheSessionUnchanged) {
  auto a = make("dense", {{"window", 7}});
  auto b = make("dense", {{"window", 7}});
  play(*a, 3);
  play(*b, 3);
  EXPECT_THAT(testing::error_of([&] { a->switch_policy("no_such_policy", {}); }),
              HasSubstr("unknown policy 'no_such_policy'"));
  EXPECT_THAT(testing::error_of([&] {
                a->switch_policy("headcast", {{"gamma", -1}});
              }),
              HasSubstr("gamma"));
  EXPECT_EQ(a->policy_name(), "dense");
  EXPECT_EQ(play(*a, 3, 3), play(*b, 3, 3));
}

TEST(SessionSwitch, LiveSettingsSurviveResetAndBadOnesAreRejected) {
  auto s = make("headcast", {{"window", 3}});
  play(*s, 4);
  s->configure_policy({{"theta_sink", 0.25}});
  EXPECT_DOUBLE_EQ(s->policy().settings()["theta_sink"].get<double>(), 0.25);
  EXPECT_EQ(s->policy_settings()["window"], 3);  // merged, not replaced
  EXPECT_THAT(testing::error_of([&] {
                s->configure_policy({{"theta_sink", "high"}});
              }),
              HasSubstr("theta_sink"));
  EXPECT_DOUBLE_EQ(s->policy().settings()["theta_sink"].get<double>(), 0.25);
  s->reset(5);
  EXPECT_DOUBLE_EQ(s->policy().settings()["theta_sink"].get<double>(), 0.25);
  EXPECT_EQ(s->policy().settings()["window"], 3);
}

// Note [Model policy settings]: the config's settings for a policy apply at creation, at every
// switch to it and after reset, under the caller's keys; the Session keeps only the caller's.
TEST(SessionSwitch, ModelPolicySettingsSitUnderTheCallersThroughSwitchesAndResets) {
  model::ModelConfig config = testing::tiny_config();
  config.policies = {{"headcast", {{"theta_dummy", 0.5}, {"theta_sink", 0.75}}}};
  SessionOptions options;
  options.context_blocks = 6;
  auto s = Session::create(config, "", "headcast", {{"window", 3}, {"theta_sink", 0.25}}, 5,
                           at::kCPU, options);
  const auto expect_settings = [&](double dummy, double sink) {
    EXPECT_DOUBLE_EQ(s->policy().settings()["theta_dummy"].get<double>(), dummy);
    EXPECT_DOUBLE_EQ(s->policy().settings()["theta_sink"].get<double>(), sink);
  };
  expect_settings(0.5, 0.25);
  EXPECT_FALSE(s->policy_settings().contains("theta_dummy"));
  play(*s, 4);
  s->switch_policy("dense", nlohmann::json::object());
  s->switch_policy("headcast", {{"window", 3}});
  expect_settings(0.5, 0.75);
  s->reset(5);
  expect_settings(0.5, 0.75);
  s->configure_policy({{"theta_dummy", 0.9}});
  expect_settings(0.9, 0.75);
}

TEST(SessionSwitch, CombinedTakesHeadCastKeysMidGameByRebuildingFromTheContext) {
  auto s = make("combined", {{"window", 3}});
  play(*s, 4);
  s->configure_policy({{"theta_sink", 0.3}, {"tau", 0.8}});
  EXPECT_DOUBLE_EQ(s->policy().settings()["theta_sink"].get<double>(), 0.3);
  EXPECT_DOUBLE_EQ(s->policy().settings()["tau"].get<double>(), 0.8);
  EXPECT_EQ(s->frame_index(), 4u);
  EXPECT_GT(s->stats().policy.total_tokens(), 0);
  EXPECT_GT(s->stats().switch_ms, 0.0);
}

TEST(SessionSwitch, ReclassifyKeepsTheHistory) {
  // combined and dummy reset on reclassify; the Session commits the context to them again.
  for (const std::string name : {"headcast", "combined", "dummy"}) {
    const nlohmann::json settings =
        name == "dummy" ? nlohmann::json::object() : nlohmann::json{{"window", 3}};
    auto s = make(name, settings);
    play(*s, 5);
    ASSERT_TRUE(s->stats().policy.classified) << name;
    s->reclassify_policy();
    EXPECT_GT(s->stats().policy.total_tokens(), 0) << name;
    // headcast keeps its stores and warms up again; combined and dummy start over and cast
    // from the re-committed context.
    if (name == "headcast") {
      EXPECT_FALSE(s->stats().policy.classified);
    }
    play(*s, 5, 5);
    EXPECT_TRUE(s->stats().policy.classified) << name;
  }
}

TEST(SessionSwitch, NegativeContextBlocksBelowMinusOneAreRejected) {
  EXPECT_THAT(testing::error_of([] { make("dense", {}, -2); }), HasSubstr("context_blocks"));
}

}  // namespace
}  // namespace wc::rollout
