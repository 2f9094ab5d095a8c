// The game benchmark loop.
#include "engine/game/throughput.h"

#include <chrono>
#include <stdexcept>

#include "engine/game/game.h"
#include "engine/game/hash.h"

namespace wc::game {

Action throughput_action(int64_t index) {
  constexpr int64_t kRunLength = 24;
  static constexpr Action kChoices[8] = {Action::kUp, Action::kDown,  Action::kLeft, Action::kRight,
                                         Action::kUp, Action::kRight, Action::kDown, Action::kNone};
  return kChoices[mix64(static_cast<uint64_t>(index / kRunLength)) % 8];
}

ThroughputResult measure_throughput(const ThroughputOptions& options) {
  if (options.frames < 1) throw std::invalid_argument("benchmark needs at least one frame");
  Game game(GameConfig{options.width, options.height, options.seed});
  const auto start = std::chrono::steady_clock::now();
  for (int64_t i = 0; i < options.frames; ++i) game.step(throughput_action(i));
  const auto stop = std::chrono::steady_clock::now();

  ThroughputResult result;
  result.frames = options.frames;
  result.width = options.width;
  result.height = options.height;
  result.seconds = std::chrono::duration<double>(stop - start).count();
  result.frames_per_second = result.seconds > 0 ? options.frames / result.seconds : 0.0;
  result.ms_per_frame = result.seconds * 1000.0 / options.frames;
  result.crystals_collected = game.crystals_collected();
  result.last_frame_hash = hash_bytes(game.frame().data(), game.frame().size());
  return result;
}

}  // namespace wc::game
