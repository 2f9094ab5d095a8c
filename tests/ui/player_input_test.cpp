// Key bindings through PlayerInput, the path both GLFW callbacks and the smoke test use.
#include <gtest/gtest.h>

#define GLFW_INCLUDE_NONE  // key codes only: no OpenGL headers (absent on the GPU machine)
#include <GLFW/glfw3.h>

#include "ui/window/player_input.h"

namespace wc::ui {
namespace {

TEST(PlayerInput, NewestHeldDirectionWins) {
  PlayerInput input;
  EXPECT_EQ(input.current_action(), Action::kNone);
  input.on_key(GLFW_KEY_D, GLFW_PRESS);
  EXPECT_EQ(input.current_action(), Action::kRight);
  input.on_key(GLFW_KEY_UP, GLFW_PRESS);
  EXPECT_EQ(input.current_action(), Action::kUp);
  input.on_key(GLFW_KEY_UP, GLFW_RELEASE);
  EXPECT_EQ(input.current_action(), Action::kRight);
  input.on_key(GLFW_KEY_D, GLFW_RELEASE);
  EXPECT_EQ(input.current_action(), Action::kNone);
  input.on_key(GLFW_KEY_A, GLFW_PRESS);
  EXPECT_EQ(input.current_action(), Action::kLeft);
  input.on_key(GLFW_KEY_S, GLFW_PRESS);
  EXPECT_EQ(input.current_action(), Action::kDown);
}

TEST(PlayerInput, CommandsFireOncePerPress) {
  PlayerInput input;
  input.on_key(GLFW_KEY_P, GLFW_PRESS);
  input.on_key(GLFW_KEY_P, GLFW_REPEAT);
  input.on_key(GLFW_KEY_F12, GLFW_PRESS);
  PlayerCommands commands = input.take_commands();
  EXPECT_TRUE(commands.toggle_pause);
  EXPECT_TRUE(commands.screenshot);
  EXPECT_FALSE(commands.reset);
  commands = input.take_commands();
  EXPECT_FALSE(commands.toggle_pause);
  EXPECT_FALSE(commands.screenshot);
  input.on_key(GLFW_KEY_N, GLFW_PRESS);
  input.on_key(GLFW_KEY_R, GLFW_PRESS);
  input.on_key(GLFW_KEY_ESCAPE, GLFW_PRESS);
  commands = input.take_commands();
  EXPECT_TRUE(commands.single_step);
  EXPECT_TRUE(commands.reset);
  EXPECT_TRUE(commands.quit);
}

}  // namespace
}  // namespace wc::ui
