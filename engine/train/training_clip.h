// Training clips recorded from the reference game: a sink frame (the game's first frame) and a
// run of consecutive frames played by the ExploringAgent, each with its action and its absolute
// frame index. See Note [Clip positions].
#pragma once

#include <cstdint>
#include <vector>

#include "engine/train/exploring_agent.h"

namespace wc::train {

struct ClipSpec {
  int frames = 8;  // frames per clip, the sink included
  int width = 128;
  int height = 128;
  double contiguous_share = 0.5;  // clips that start at the game's first frame
  int max_walk = 400;             // other clips first let the agent walk up to this many frames
  int64_t max_position = 12000;   // and place their run at a random frame index up to this
  AgentStyle agent;
  // Also record each frame's ground window (Note [Tile tokens], engine/model/tile_tokenizer.h).
  bool ground = false;
};

// The ground window of a frame of `width` x `height`: the tiles from the one under its top-left
// pixel, enough of them to cover the view at either phase of the tile grid.
int ground_cols(int width);
int ground_rows(int height);

// One clip: RGBA8 frames (frames × height × width × 4), the action that produced each frame
// (none for the sink) and each frame's absolute frame index for RoPE.
struct Clip {
  std::vector<uint8_t> rgba;
  std::vector<int64_t> actions;
  std::vector<int64_t> positions;
  // Each frame's top-left tile quarter, row·2 + column (Note [Tile quarters] in dit.h).
  std::vector<int64_t> quarters;
  // With ClipSpec::ground: each frame's ground window as the game draws it without the sprite
  // and the HUD (frames × rows·16 × cols·16 × 4 RGBA8), and the tile (x, y) at its top left.
  std::vector<uint8_t> ground_rgba;
  std::vector<int64_t> origins;
  // What replays it: the world seed and the actions walked between the sink and the run.
  uint64_t world_seed = 0;
  std::vector<int64_t> walk;
};

// The clip of `seed` (world, agent and placement all follow from it).
Clip record_clip(const ClipSpec& spec, uint64_t seed);

}  // namespace wc::train
