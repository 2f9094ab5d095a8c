// Keyboard -> the player's action and one-shot commands. The GLFW key callback and the smoke
// test's injected key presses both go through on_key, so tests exercise the real input path.
#pragma once

#include "engine/rollout/frame_source.h"

namespace wc::ui {

struct PlayerCommands {
  bool toggle_pause = false;
  bool single_step = false;
  bool reset = false;
  bool screenshot = false;
  bool record = false;  // start or stop recording
  bool quit = false;
};

class PlayerInput {
 public:
  // `key` and `action` are GLFW values (GLFW_KEY_*, GLFW_PRESS/RELEASE/REPEAT).
  void on_key(int key, int action);
  // The most recently pressed direction that is still held (WASD or arrows); kNone otherwise.
  Action current_action() const;
  // Commands pressed since the last call.
  PlayerCommands take_commands();

 private:
  static constexpr int kDirections = 4;  // up, down, left, right
  bool held_[kDirections] = {};
  unsigned press_order_[kDirections] = {};
  unsigned presses_ = 0;
  PlayerCommands pending_;
};

}  // namespace wc::ui
