// Key bindings: WASD/arrows move, P pause, N step, R reset, F9 record, F12 screenshot, Esc quit.
#include "ui/window/player_input.h"

#define GLFW_INCLUDE_NONE  // key codes only: no OpenGL headers (absent on the GPU machine)
#include <GLFW/glfw3.h>

namespace wc::ui {
namespace {

// Index into the direction arrays, or -1.
int direction_of(int key) {
  switch (key) {
    case GLFW_KEY_W:
    case GLFW_KEY_UP:
      return 0;
    case GLFW_KEY_S:
    case GLFW_KEY_DOWN:
      return 1;
    case GLFW_KEY_A:
    case GLFW_KEY_LEFT:
      return 2;
    case GLFW_KEY_D:
    case GLFW_KEY_RIGHT:
      return 3;
    default:
      return -1;
  }
}

}  // namespace

void PlayerInput::on_key(int key, int action) {
  const int direction = direction_of(key);
  if (direction >= 0) {
    if (action == GLFW_PRESS) {
      held_[direction] = true;
      press_order_[direction] = ++presses_;
    } else if (action == GLFW_RELEASE) {
      held_[direction] = false;
    }
    return;
  }
  if (action != GLFW_PRESS) return;  // commands fire once per press, not on auto-repeat
  switch (key) {
    case GLFW_KEY_P:
      pending_.toggle_pause = true;
      break;
    case GLFW_KEY_N:
      pending_.single_step = true;
      break;
    case GLFW_KEY_R:
      pending_.reset = true;
      break;
    case GLFW_KEY_F9:
      pending_.record = true;
      break;
    case GLFW_KEY_F12:
      pending_.screenshot = true;
      break;
    case GLFW_KEY_ESCAPE:
      pending_.quit = true;
      break;
    default:
      break;
  }
}

Action PlayerInput::current_action() const {
  static constexpr Action kActions[kDirections] = {Action::kUp, Action::kDown, Action::kLeft,
                                                   Action::kRight};
  int newest = -1;
  for (int i = 0; i < kDirections; ++i) {
    if (held_[i] && (newest < 0 || press_order_[i] > press_order_[newest])) newest = i;
  }
  return newest < 0 ? Action::kNone : kActions[newest];
}

PlayerCommands PlayerInput::take_commands() {
  const PlayerCommands commands = pending_;
  pending_ = {};
  return commands;
}

}  // namespace wc::ui
