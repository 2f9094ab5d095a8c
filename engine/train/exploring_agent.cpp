// See exploring_agent.h.
#include "engine/train/exploring_agent.h"

#include <algorithm>

namespace wc::train {
namespace {

using game::Action;

constexpr size_t kRememberedMoves = 256;

Action perpendicular(Action action, bool clockwise) {
  switch (action) {
    case Action::kUp:
    case Action::kDown:
      return clockwise ? Action::kRight : Action::kLeft;
    case Action::kLeft:
    case Action::kRight:
      return clockwise ? Action::kUp : Action::kDown;
    case Action::kNone:
      break;
  }
  return Action::kNone;
}

}  // namespace

ExploringAgent::ExploringAgent(uint64_t seed, AgentStyle style) : style_(style), rng_(seed) {}

int ExploringAgent::draw_duration(double mean) {
  std::geometric_distribution<int> frames(1.0 / std::max(1.0, mean));
  return 1 + frames(rng_);
}

void ExploringAgent::decide() {
  std::uniform_real_distribution<double> unit(0.0, 1.0);
  const double roll = unit(rng_);
  if (roll < style_.return_share && !moves_.empty()) {
    // Walk back over the newest moves, newest first, so the views of a moment ago return.
    const int length = std::uniform_int_distribution<int>(
        4, std::max(4, std::min<int>(style_.max_return_frames, static_cast<int>(moves_.size()))))(
        rng_);
    const size_t begin =
        moves_.size() - std::min<size_t>(moves_.size(), static_cast<size_t>(length));
    return_.clear();
    for (size_t i = begin; i < moves_.size(); ++i) return_.push_back(opposite(moves_[i]));
    current_ = Action::kNone;
    remaining_ = 0;
    return;
  }
  if (roll < style_.return_share + style_.idle_share) {
    current_ = Action::kNone;
    remaining_ = draw_duration(style_.mean_idle_frames);
    return;
  }
  current_ = static_cast<Action>(std::uniform_int_distribution<int>(1, 4)(rng_));
  remaining_ = draw_duration(style_.mean_hold_frames);
}

Action ExploringAgent::next(const game::Game& game) {
  const bool blocked = last_ != Action::kNone && !game.walking() && game.frame_index() > 0;
  if (!blocked) {
    pushing_ = Action::kNone;
  } else if (last_ != pushing_) {
    // A new obstacle (or a new key against one): lean on the key for the rest of the hold, or
    // follow the wall, turning along the obstacle instead of pushing into it.
    if (style_.push_share > 0.0 && std::bernoulli_distribution(style_.push_share)(rng_)) {
      pushing_ = last_;
    } else {
      pushing_ = Action::kNone;
      return_.clear();
      current_ = perpendicular(last_, std::bernoulli_distribution(0.5)(rng_));
      remaining_ = draw_duration(style_.mean_hold_frames);
    }
  }
  Action action;
  if (!return_.empty()) {
    action = return_.back();
    return_.pop_back();
  } else {
    if (remaining_ <= 0) decide();
    if (!return_.empty()) {
      action = return_.back();
      return_.pop_back();
    } else {
      action = current_;
      --remaining_;
    }
  }
  if (action != Action::kNone) {
    moves_.push_back(action);
    if (moves_.size() > kRememberedMoves) moves_.erase(moves_.begin(), moves_.begin() + 64);
  }
  last_ = action;
  return action;
}

}  // namespace wc::train
