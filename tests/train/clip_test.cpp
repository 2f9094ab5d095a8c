// Training clips are the reference game's true frames, replayable from what the clip records,
// and batches are a pure function of (seed, index).
#include <gtest/gtest.h>

#include <cstring>
#include <map>
#include <vector>

#include "engine/game/game.h"
#include "engine/model/model_config.h"
#include "engine/model/tile_quarters.h"
#include "engine/train/clip_stream.h"
#include "engine/train/training_clip.h"

namespace wc::train {
namespace {

ClipSpec small_spec() {
  ClipSpec spec;
  spec.frames = 6;
  spec.width = 32;
  spec.height = 32;
  spec.max_walk = 50;
  spec.max_position = 5000;
  return spec;
}

TEST(TrainingClip, FramesAreTheGamesFramesUnderTheRecordedActions) {
  const ClipSpec spec = small_spec();
  int contiguous = 0, placed = 0;
  for (uint64_t seed = 0; seed < 40; ++seed) {
    const Clip clip = record_clip(spec, seed);
    game::Game g({spec.width, spec.height, clip.world_seed, true});
    const size_t bytes = static_cast<size_t>(spec.width) * spec.height * 4;
    ASSERT_EQ(std::memcmp(clip.rgba.data(), g.frame().data(), bytes), 0) << "sink, seed " << seed;
    for (int64_t a : clip.walk) g.step(static_cast<game::Action>(a));
    EXPECT_EQ(clip.actions[0], 0);
    EXPECT_EQ(clip.positions[0], 0);
    for (int f = 1; f < spec.frames; ++f) {
      g.step(static_cast<game::Action>(clip.actions[static_cast<size_t>(f)]));
      ASSERT_EQ(std::memcmp(clip.rgba.data() + bytes * f, g.frame().data(), bytes), 0)
          << "frame " << f << ", seed " << seed;
      if (f > 1) {
        EXPECT_EQ(clip.positions[f], clip.positions[f - 1] + 1);
      }
    }
    if (clip.walk.empty()) {
      ++contiguous;
      EXPECT_EQ(clip.positions[1], 1);
    } else {
      ++placed;
      EXPECT_GT(clip.positions[1], static_cast<int64_t>(clip.walk.size()));
      EXPECT_LE(clip.positions[1], spec.max_position);
    }
  }
  EXPECT_GT(contiguous, 5);
  EXPECT_GT(placed, 5);
}

// Note [Tile quarters]: a clip records the quarter of its tile each frame's top-left patch shows.
// The game's first frame shows the quarter the bundled quarter model's config names, and each
// frame's quarter is the one before it moved by the shift its patches made (Note [Quarter
// tracking]), the rule play follows on the model's own frames.
TEST(TrainingClip, QuartersFollowTheViewsShift) {
  const int patch = 8;
  const model::ModelConfig bundled =
      model::load_model_config(WORLDCAST_SOURCE_DIR "/assets/configs/game-tokens-quarters.json");
  ASSERT_EQ(bundled.tile_quarters.size(), 2u);
  const int64_t first = bundled.tile_quarters[0] * 2 + bundled.tile_quarters[1];
  for (int side : {64, 128}) {
    ClipSpec spec = small_spec();
    spec.width = spec.height = side;
    spec.frames = 12;
    const int g = side / patch;
    const size_t bytes = static_cast<size_t>(side) * side * 4;
    int followed = 0;
    for (uint64_t seed = 0; seed < 12; ++seed) {
      const Clip clip = record_clip(spec, seed);
      ASSERT_EQ(clip.quarters.size(), static_cast<size_t>(spec.frames));
      EXPECT_EQ(clip.quarters[0], first) << "sink, seed " << seed;
      // Each distinct patch of the clip is one token.
      std::map<std::vector<uint8_t>, int64_t> ids;
      at::Tensor tokens = at::empty({spec.frames, g, g}, at::kLong);
      for (int f = 0; f < spec.frames; ++f) {
        for (int y = 0; y < g; ++y) {
          for (int x = 0; x < g; ++x) {
            std::vector<uint8_t> p;
            for (int r = 0; r < patch; ++r) {
              const uint8_t* row = clip.rgba.data() + bytes * f +
                                   ((static_cast<size_t>(y) * patch + r) * side + x * patch) * 4;
              p.insert(p.end(), row, row + patch * 4);
            }
            const auto found = ids.emplace(p, static_cast<int64_t>(ids.size())).first;
            tokens[f][y][x] = found->second;
          }
        }
      }
      // The run's frames follow one another (a placed clip's first frame comes after a walk).
      const int from = clip.walk.empty() ? 0 : 1;
      const at::Tensor start = at::full({1}, clip.quarters[static_cast<size_t>(from)], at::kLong);
      const at::Tensor quarters = model::follow_quarters(start, tokens.select(0, from).unsqueeze(0),
                                                         tokens.slice(0, from + 1).unsqueeze(0));
      for (int f = from + 1; f < spec.frames; ++f) {
        EXPECT_EQ(quarters[0][f - from - 1].item<int64_t>(), clip.quarters[static_cast<size_t>(f)])
            << "frame " << f << ", seed " << seed << ", side " << side;
        ++followed;
      }
    }
    EXPECT_GT(followed, 100);
  }
}

TEST(ClipStream, BatchesDependOnSeedAndIndexOnly) {
  const ClipSpec spec = small_spec();
  ClipStream threaded(spec, 3, 9, 4, /*workers=*/3);
  for (int64_t index = 4; index < 9; ++index) {
    const ClipBatch batch = threaded.next();
    EXPECT_EQ(batch.index, index);
    const ClipBatch direct = make_clip_batch(spec, 3, 9, index);
    EXPECT_TRUE(batch.frames.equal(direct.frames));
    EXPECT_TRUE(batch.actions.equal(direct.actions));
    EXPECT_TRUE(batch.positions.equal(direct.positions));
  }
  EXPECT_FALSE(make_clip_batch(spec, 3, 9, 4).frames.equal(make_clip_batch(spec, 3, 10, 4).frames));
}

TEST(ClipStream, FramesAreEncodedLikeTheSession) {
  const ClipSpec spec = small_spec();
  const ClipBatch batch = make_clip_batch(spec, 1, 2, 0);
  EXPECT_EQ(batch.frames.sizes(), at::IntArrayRef({1, 6, 3, 32, 32}));
  EXPECT_LE(batch.frames.max().item<float>(), 1.0f);
  EXPECT_GE(batch.frames.min().item<float>(), -1.0f);
  // Every value is a byte mapped by b / 127.5 − 1 (rollout::encode_rgba's encoding).
  const at::Tensor bytes = (batch.frames + 1.0) * 127.5;
  EXPECT_LT((bytes - bytes.round()).abs().max().item<float>(), 1e-3f);
}

}  // namespace
}  // namespace wc::train
