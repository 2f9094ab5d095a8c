// The reference game behind the FrameSource interface.
#include "engine/rollout/game_source.h"

#include <stdexcept>

#include "engine/core/error.h"
#include "engine/game/game.h"

namespace wc {
namespace {

class GameSource final : public FrameSource {
 public:
  explicit GameSource(const game::GameConfig& config) : game_(config) {}

  std::string name() const override { return "game"; }
  int width() const override { return game_.width(); }
  int height() const override { return game_.height(); }
  void reset(uint64_t seed) override { game_.reset(seed); }
  void step(Action action) override { game_.step(action); }
  const uint8_t* rgba() const override { return game_.frame().data(); }
  uint64_t frame_index() const override { return game_.frame_index(); }

 private:
  game::Game game_;
};

}  // namespace

std::unique_ptr<FrameSource> make_game_source(int width, int height, uint64_t seed) {
  try {
    return std::make_unique<GameSource>(game::GameConfig{width, height, seed});
  } catch (const std::invalid_argument& error) {
    // Callers (CLI, viewer, plugin) report wc::Error; wc_game itself has no wc_core to throw it.
    throw Error("game source", error.what());
  }
}

}  // namespace wc
