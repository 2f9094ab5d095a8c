// See tile_structure.h.
#include "engine/eval/tile_structure.h"

#include "engine/eval/player_actions.h"
#include "engine/game/world.h"

namespace wc::eval {
namespace {

static_assert(kStructureBlock == game::kTileSize, "a structure block is one tile");
static_assert(game::kPlayerSpeed == kStructurePatch, "the camera moves half a tile a step");

GroupSet patch_groups(const std::vector<TerrainGroup>& groups, int width, int x0, int y0) {
  GroupSet set = 0;
  for (int y = y0; y < y0 + kStructurePatch; ++y) {
    const TerrainGroup* row = groups.data() + static_cast<size_t>(y) * width;
    for (int x = x0; x < x0 + kStructurePatch; ++x) set |= GroupSet(1u << static_cast<int>(row[x]));
  }
  return set;
}

// A half of a block as one value: the side and its two GroupSets.
uint32_t half_key(BlockKey key, BlockHalf half) {
  const uint32_t tl = key & 0xFF, tr = (key >> 8) & 0xFF, bl = (key >> 16) & 0xFF, br = key >> 24;
  uint32_t a = 0, b = 0;
  switch (half) {
    case BlockHalf::kLeft:
      a = tl, b = bl;
      break;
    case BlockHalf::kRight:
      a = tr, b = br;
      break;
    case BlockHalf::kTop:
      a = tl, b = tr;
      break;
    case BlockHalf::kBottom:
      a = bl, b = br;
      break;
  }
  return (static_cast<uint32_t>(half) << 16) | (a << 8) | b;
}

int positive_mod(int value, int modulus) {
  const int m = value % modulus;
  return m < 0 ? m + modulus : m;
}

}  // namespace

bool overlaps_any(const std::vector<game::PixelRect>& rects, int x, int y, int side) {
  for (const game::PixelRect& r : rects) {
    if (x < r.x + r.width && r.x < x + side && y < r.y + r.height && r.y < y + side) return true;
  }
  return false;
}

GridPhase game_grid_phase(const game::Game& game) {
  // Tile t is drawn at screen x = 16 t - camera_x.
  return {positive_mod(-game.camera_x(), kStructureBlock),
          positive_mod(-game.camera_y(), kStructureBlock)};
}

bool plain_block(BlockKey key) {
  const GroupSet first = key & 0xFF;
  const bool one_group = first != 0 && (first & (first - 1)) == 0;
  return one_group && key == (BlockKey{first} * 0x01010101u);
}

std::vector<BlockKey> frame_blocks(const std::vector<TerrainGroup>& groups, int width, int height,
                                   GridPhase phase, const std::vector<game::PixelRect>& excluded) {
  std::vector<BlockKey> blocks;
  for (int y = phase.y; y + kStructureBlock <= height; y += kStructureBlock) {
    for (int x = phase.x; x + kStructureBlock <= width; x += kStructureBlock) {
      if (overlaps_any(excluded, x, y, kStructureBlock)) continue;
      blocks.push_back(block_at(groups, width, x, y));
    }
  }
  return blocks;
}

BlockKey block_at(const std::vector<TerrainGroup>& groups, int width, int x, int y) {
  const int p = kStructurePatch;
  return BlockKey{patch_groups(groups, width, x, y)} |
         (BlockKey{patch_groups(groups, width, x + p, y)} << 8) |
         (BlockKey{patch_groups(groups, width, x, y + p)} << 16) |
         (BlockKey{patch_groups(groups, width, x + p, y + p)} << 24);
}

void TileBlockSurvey::add(const std::vector<BlockKey>& blocks) {
  for (BlockKey key : blocks) {
    if (!known_.insert(key).second) continue;
    for (BlockHalf half :
         {BlockHalf::kLeft, BlockHalf::kRight, BlockHalf::kTop, BlockHalf::kBottom})
      known_halves_.insert(half_key(key, half));
  }
  ++frames_;
}

bool TileBlockSurvey::knows_half(BlockKey key, BlockHalf half) const {
  return known_halves_.count(half_key(key, half)) != 0;
}

TileBlockSurvey survey_tile_blocks(int width, int height) {
  TileBlockSurvey survey;
  const std::vector<game::PixelRect> overlays = game::screen_overlays(width, height);
  game::GameConfig config;
  config.width = width;
  config.height = height;
  game::Game game(config);
  for (int i = 0; i < kStructureSurveySeeds; ++i) {
    const uint64_t seed = kStructureSurveyFirstSeed + static_cast<uint64_t>(i);
    game.reset(seed);
    for (game::Action action : player_actions(seed, kStructureSurveyFrames)) {
      game.step(action);
      const std::vector<TerrainGroup> groups = terrain_groups(game.frame().data(), width, height);
      survey.add(frame_blocks(groups, width, height, game_grid_phase(game), overlays));
    }
  }
  return survey;
}

StructureScore score_structure(const std::vector<TerrainGroup>& groups, int width, int height,
                               GridPhase phase, const std::vector<game::PixelRect>& excluded,
                               const TileBlockSurvey& survey) {
  StructureScore score;
  score.phase = phase;
  for (BlockKey key : frame_blocks(groups, width, height, phase, excluded)) {
    if (plain_block(key)) continue;
    ++score.scored;
    score.known += survey.knows(key);
  }
  return score;
}

StructureScore best_structure(const std::vector<TerrainGroup>& groups, int width, int height,
                              const std::vector<game::PixelRect>& excluded,
                              const TileBlockSurvey& survey) {
  // Known minus unknown: a phase where only plain ground is whole (no scored block at all) beats
  // one where ground edges and trees are cut in half.
  const auto margin = [](const StructureScore& score) { return 2 * score.known - score.scored; };
  StructureScore best;
  bool first = true;
  for (GridPhase phase : kGridPhases) {
    const StructureScore score = score_structure(groups, width, height, phase, excluded, survey);
    if (first || margin(score) > margin(best)) best = score;
    first = false;
  }
  return best;
}

}  // namespace wc::eval
