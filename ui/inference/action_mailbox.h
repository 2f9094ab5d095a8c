// The render thread's actions for the inference thread: a single-producer mailbox whose consumer
// takes the newest action once per generated frame (DESIGN.md §4).
#pragma once

#include <mutex>

#include "engine/rollout/frame_source.h"

namespace wc::ui {

// Note [Newest action]
// The model may take longer than many display frames to generate one frame, so a queue of every
// action would make the game lag further and further behind the keys; the newest action is what
// the player means now. A bare "current value" would lose a tap that is pressed and released
// between two generated frames, though, so a direction offered since the last take() wins over
// a later kNone: a tap moves the player at least one frame.
class ActionMailbox {
 public:
  // Producer (the render thread, once per rendered frame or per key event).
  void offer(Action action);
  // Consumer (the inference thread, once per generated frame).
  Action take();

 private:
  std::mutex mutex_;
  Action newest_ = Action::kNone;
  Action latched_ = Action::kNone;  // newest non-none action offered since the last take()
};

}  // namespace wc::ui
