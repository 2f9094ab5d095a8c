// Action names and their parsing.
#include "engine/game/action.h"

#include <gtest/gtest.h>

namespace wc::game {
namespace {

TEST(Action, NamesRoundTrip) {
  for (int i = 0; i < kActionCount; ++i) {
    const Action action = static_cast<Action>(i);
    const auto parsed = parse_action(action_name(action));
    ASSERT_TRUE(parsed.has_value()) << action_name(action);
    EXPECT_EQ(*parsed, action);
  }
  EXPECT_STREQ(action_name(Action::kLeft), "left");
}

TEST(Action, ParsesCaseInsensitivelyAndSingleLetters) {
  EXPECT_EQ(parse_action("RIGHT"), Action::kRight);
  EXPECT_EQ(parse_action("Up"), Action::kUp);
  EXPECT_EQ(parse_action("n"), Action::kNone);
  EXPECT_EQ(parse_action("u"), Action::kUp);
  EXPECT_EQ(parse_action("d"), Action::kDown);
  EXPECT_EQ(parse_action("l"), Action::kLeft);
  EXPECT_EQ(parse_action("R"), Action::kRight);
  EXPECT_EQ(parse_action("w"), Action::kUp);
  EXPECT_EQ(parse_action("a"), Action::kLeft);
  EXPECT_EQ(parse_action("s"), Action::kDown);
}

TEST(Action, RejectsUnknownNames) {
  EXPECT_FALSE(parse_action("").has_value());
  EXPECT_FALSE(parse_action("jump").has_value());
  EXPECT_FALSE(parse_action("rightt").has_value());
  EXPECT_FALSE(parse_action(" up").has_value());
  EXPECT_FALSE(parse_action(std::string_view("up\0", 3)).has_value());
}

}  // namespace
}  // namespace wc::game
