// See action_mailbox.h and Note [Newest action].
#include "ui/inference/action_mailbox.h"

namespace wc::ui {

void ActionMailbox::offer(Action action) {
  std::lock_guard<std::mutex> lock(mutex_);
  newest_ = action;
  if (action != Action::kNone) latched_ = action;
}

Action ActionMailbox::take() {
  std::lock_guard<std::mutex> lock(mutex_);
  const Action action = newest_ != Action::kNone ? newest_ : latched_;
  latched_ = Action::kNone;
  return action;
}

}  // namespace wc::ui
