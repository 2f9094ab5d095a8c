// Whether a frame is drawn in whole tiles, as the game draws it: 2x2 blocks of 8x8 patches on the
// 16-pixel tile grid, each patch reduced to the terrain groups it uses, checked against the blocks
// the true game draws (DESIGN.md §13, world content: structure).
#pragma once

#include <array>
#include <cstdint>
#include <unordered_set>
#include <vector>

#include "engine/eval/terrain_groups.h"
#include "engine/game/game.h"

namespace wc::eval {

// Note [Tile structure]: tiles are 16x16 pixels and the camera moves 8 pixels a step, so the tile
// grid sits at 0 or 8 pixels on screen in each axis. A block is the 16x16 square at one grid
// phase, read as its four 8x8 patches (the model's tokens), each reduced to the set of terrain
// groups it uses: a 4-tuple of group sets. At the game's own phase a block is one tile, so the
// game draws few kinds of block: a plain tile (one group in all four patches), a tree (grass,
// outline and leaves or trunk in every patch) and a crystal (grass, outline and crystal in every
// patch). A model that draws half tiles, a tree cut in two, or ground edges off the tile grid
// makes blocks the game never draws. Blocks that overlap the HUD or the sprite, or hang over the
// frame's edge, are not read.
//
// Which blocks count: a plain block (inside a lake, a beach, a wall, a meadow) looks the same at
// every phase, so it says nothing about the tile grid; only the other blocks are scored: at the
// game's phase its trees and crystals, and whatever a model draws that mixes groups in a block
// (a shore or a wall's end off the grid, half a tree). How much plain ground there is is the
// terrain mix's question.
//
// The model's grid phase is not known (its world may have slipped half a tile from the game's),
// so each frame is read at the phase where its known blocks outnumber its unknown ones the most
// (a frame without trees has no scored block at the game's phase and many at the others, where
// its shores are cut in half: no known ones anywhere, and the game's phase must still win). The
// game's own frames at their phase score all their blocks, and half a tile off in both axes
// hardly any (only where four trees meet); half a tile off in one axis, two trees side by side
// or one above the other read as one (each half of a tree holds grass, outline and leaves).
inline constexpr int kStructurePatch = 8;
inline constexpr int kStructureBlock = 2 * kStructurePatch;  // one tile, game::kTileSize

// The groups an 8x8 patch uses, one bit per TerrainGroup.
using GroupSet = uint8_t;
// Four GroupSets: top-left, top-right, bottom-left, bottom-right, one byte each.
using BlockKey = uint32_t;

struct GridPhase {
  int x = 0;  // 0 or kStructurePatch: where the first whole tile starts on screen
  int y = 0;
  friend bool operator==(GridPhase a, GridPhase b) { return a.x == b.x && a.y == b.y; }
};

// The four phases, (0, 0) first.
inline constexpr std::array<GridPhase, 4> kGridPhases = {
    GridPhase{0, 0}, GridPhase{kStructurePatch, 0}, GridPhase{0, kStructurePatch},
    GridPhase{kStructurePatch, kStructurePatch}};

// Where the game's tile grid sits on screen now.
GridPhase game_grid_phase(const game::Game& game);

// Whether the side x side square at (x, y) overlaps any of `rects`.
bool overlaps_any(const std::vector<game::PixelRect>& rects, int x, int y, int side);

// A block one group in all four patches, alone (plain ground, grass included): not scored.
bool plain_block(BlockKey key);

// The blocks of a frame's groups (terrain_groups) at `phase`, leaving out blocks that overlap
// `excluded` or the frame's edge.
std::vector<BlockKey> frame_blocks(const std::vector<TerrainGroup>& groups, int width, int height,
                                   GridPhase phase, const std::vector<game::PixelRect>& excluded);

// The block whose top-left corner is at (x, y) of a frame's groups (inside the frame).
BlockKey block_at(const std::vector<TerrainGroup>& groups, int width, int x, int y);

// A block's halves: the two patches on one side of it.
enum class BlockHalf : uint8_t { kLeft, kRight, kTop, kBottom };

// The blocks the true game draws, surveyed from its frames at their grid phase, and the halves
// of them (what a tile shows with its other half still off the screen).
class TileBlockSurvey {
 public:
  void add(const std::vector<BlockKey>& blocks);
  bool knows(BlockKey key) const { return known_.count(key) != 0; }
  // Whether `key`'s `half` is that half of some block the game draws.
  bool knows_half(BlockKey key, BlockHalf half) const;
  size_t size() const { return known_.size(); }
  int64_t frames() const { return frames_; }

 private:
  std::unordered_set<BlockKey> known_;
  std::unordered_set<uint32_t> known_halves_;  // half_key
  int64_t frames_ = 0;
};

// The survey the world metric reads against: kStructureSurveySeeds worlds, each walked
// kStructureSurveyFrames frames by player_actions, every frame's blocks at the game's grid phase.
// Deterministic: same frame size, same survey.
inline constexpr int kStructureSurveySeeds = 32;
inline constexpr int kStructureSurveyFrames = 300;
inline constexpr uint64_t kStructureSurveyFirstSeed = 2000000;
TileBlockSurvey survey_tile_blocks(int width, int height);

struct StructureScore {
  GridPhase phase;
  int64_t scored = 0;  // blocks that are not plain (see Note [Tile structure])
  int64_t known = 0;   // of them, blocks the game draws
};

// The frame's blocks at `phase`, scored against the survey.
StructureScore score_structure(const std::vector<TerrainGroup>& groups, int width, int height,
                               GridPhase phase, const std::vector<game::PixelRect>& excluded,
                               const TileBlockSurvey& survey);
// At the phase with the largest known-minus-unknown margin (ties go to the earlier of
// kGridPhases).
StructureScore best_structure(const std::vector<TerrainGroup>& groups, int width, int height,
                              const std::vector<game::PixelRect>& excluded,
                              const TileBlockSurvey& survey);

}  // namespace wc::eval
