// See reference_run.h.
#include "engine/eval/reference_run.h"

#include "engine/core/error.h"
#include "engine/eval/frame_tensor.h"

namespace wc::eval {
namespace {

game::GameConfig game_config(int width, int height, uint64_t seed) {
  game::GameConfig config;
  config.width = width;
  config.height = height;
  config.seed = seed;
  return config;  // HUD on, as the Session's seeding game draws it
}

}  // namespace

ReferenceRun::ReferenceRun(int width, int height, uint64_t seed, int seed_frames)
    : game_(game_config(width, height, seed)) {
  if (seed_frames < 1) {
    throw Error("eval", "seed_frames must be at least 1: the metrics compare against the game");
  }
  for (int i = 1; i < seed_frames; ++i) game_.step(game::Action::kNone);
}

bool ReferenceRun::step(game::Action action) {
  game_.step(action);
  return game_.walking();
}

at::Tensor ReferenceRun::frame() const {
  return copy_rgba(game_.frame().data(), game_.width(), game_.height());
}

bool ReferenceRun::can_walk(game::Action direction, int steps) const {
  game::Game copy = game_;
  for (int i = 0; i < steps; ++i) {
    copy.step(direction);
    if (!copy.walking()) return false;
  }
  return true;
}

}  // namespace wc::eval
