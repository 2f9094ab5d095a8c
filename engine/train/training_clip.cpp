// See training_clip.h.
#include "engine/train/training_clip.h"

#include <algorithm>
#include <cstring>
#include <random>

#include "engine/game/game.h"
#include "engine/game/hash.h"
#include "engine/game/render.h"

namespace wc::train {
namespace {

// The quarter (row·2 + column) of its tile that the frame's top-left patch shows, a patch being
// half a tile, the camera's step (Note [Tile quarters] in dit.h).
int64_t top_left_quarter(const game::Game& game) {
  constexpr int half = game::kTileSize / 2;
  const auto parity = [](int camera) { return game::floor_mod(game::floor_div(camera, half), 2); };
  return parity(game.camera_y()) * 2 + parity(game.camera_x());
}

// Appends the ground window of the frame `game` shows now (ClipSpec::ground) to `clip`.
void record_ground(const game::Game& game, Clip& clip) {
  const int cols = ground_cols(game.width()), rows = ground_rows(game.height());
  const int32_t x0 = game::floor_div(game.camera_x(), game::kTileSize);
  const int32_t y0 = game::floor_div(game.camera_y(), game::kTileSize);
  const size_t bytes = static_cast<size_t>(cols) * rows * game::kTileSize * game::kTileSize * 4;
  clip.ground_rgba.resize(clip.ground_rgba.size() + bytes);
  game::render_ground(game, x0, y0, cols, rows,
                      clip.ground_rgba.data() + clip.ground_rgba.size() - bytes);
  clip.origins.push_back(x0);
  clip.origins.push_back(y0);
}

}  // namespace

int ground_cols(int width) {
  return width / game::kTileSize + 1;
}
int ground_rows(int height) {
  return height / game::kTileSize + 1;
}

// Note [Clip positions]
// At play time the attention window holds the sink block (the seeded first frame, at frame
// index 0) and the newest frames, whose indices grow without bound. RoPE makes attention depend
// on index differences only, so the model must meet every sink-to-window distance a long game
// produces. Half of the clips are the game's true start (sink at 0, run at 1, 2, ...); the other
// half let the agent walk first and then place the run at a random index up to max_position,
// keeping the sink at 0. The walk makes the run's view differ from the sink's, as it does late
// in a game; its length need not equal the index gap, since nothing in a frame shows its age.
Clip record_clip(const ClipSpec& spec, uint64_t seed) {
  std::mt19937_64 rng(seed);
  Clip clip;
  game::GameConfig config;
  config.width = spec.width;
  config.height = spec.height;
  config.seed = rng();
  game::Game game(config);
  clip.world_seed = config.seed;
  ExploringAgent agent(rng(), spec.agent);

  const size_t frame_bytes = static_cast<size_t>(spec.width) * spec.height * 4;
  clip.rgba.resize(frame_bytes * static_cast<size_t>(spec.frames));
  clip.actions.assign(static_cast<size_t>(spec.frames), 0);
  clip.positions.assign(static_cast<size_t>(spec.frames), 0);
  clip.quarters.assign(static_cast<size_t>(spec.frames), top_left_quarter(game));
  std::memcpy(clip.rgba.data(), game.frame().data(), frame_bytes);
  if (spec.ground) record_ground(game, clip);

  int64_t run_start = 1;
  if (std::uniform_real_distribution<double>(0.0, 1.0)(rng) >= spec.contiguous_share) {
    const int walk = std::uniform_int_distribution<int>(1, std::max(1, spec.max_walk))(rng);
    for (int i = 0; i < walk; ++i) {
      const game::Action action = agent.next(game);
      game.step(action);
      clip.walk.push_back(static_cast<int64_t>(action));
    }
    run_start = std::uniform_int_distribution<int64_t>(
        walk + 1, std::max<int64_t>(walk + 1, spec.max_position))(rng);
  }
  for (int f = 1; f < spec.frames; ++f) {
    const game::Action action = agent.next(game);
    game.step(action);
    std::memcpy(clip.rgba.data() + frame_bytes * static_cast<size_t>(f), game.frame().data(),
                frame_bytes);
    clip.actions[static_cast<size_t>(f)] = static_cast<int64_t>(action);
    clip.positions[static_cast<size_t>(f)] = run_start + f - 1;
    clip.quarters[static_cast<size_t>(f)] = top_left_quarter(game);
    if (spec.ground) record_ground(game, clip);
  }
  return clip;
}

}  // namespace wc::train
