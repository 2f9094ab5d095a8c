// The world metric end to end on real components: the reference game as the model scores its
// ceiling on every number; the game with its ground painted over as an empty grass field scores
// badly on every number that reads the world, and the report's checks say so; the game playing
// another of its worlds scores the another-world reference.
#include <gtest/gtest.h>

#include <cstdio>
#include <cstring>
#include <memory>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "engine/core/error.h"
#include "engine/eval/eval_report.h"
#include "engine/eval/game_as_model.h"
#include "engine/eval/memory_trip.h"
#include "engine/eval/reference_run.h"
#include "engine/eval/run_eval.h"
#include "engine/eval/world_content.h"
#include "engine/game/game.h"
#include "engine/game/palette.h"
#include "tests/eval/eval_test_config.h"

namespace wc::eval {
namespace {

using Json = nlohmann::json;

constexpr int kSide = 128;

EvalOptions world_options() {
  EvalOptions options;
  options.config = testing::eval_tiny_config(kSide);
  options.seeds = {1000000, 1000001, 1000002};
  options.metrics = {Metric::kWorld};
  options.source_name = "game";
  options.make_source = [](const std::string&, uint64_t seed) {
    return make_game_as_model(kSide, kSide, 1, seed);
  };
  return options;
}

const Json& check_named(const Json& report, const std::string& name) {
  for (const Json& c : report["checks"]) {
    if (c["name"] == name) return c;
  }
  static const Json kNone = nullptr;
  ADD_FAILURE() << "no check " << name;
  return kNone;
}

TEST(WorldContent, TheGameItselfScoresTheCeiling) {
  EvalOptions options = world_options();
  int grids = 0;
  int64_t grid_width = 0, grid_height = 0;
  options.keep_frame = [&](const std::string& name, const at::Tensor& frame) {
    EXPECT_EQ(name, "world_walk_grid");
    ++grids;
    grid_height = frame.size(0);
    grid_width = frame.size(1);
  };
  const Json report = run_eval(options);
  const Json& w = report["world"];
  EXPECT_EQ(w["frames_per_seed"].get<int>(), 600);
  EXPECT_EQ(w["terrain_tv"].get<double>(), 0.0);
  EXPECT_EQ(w["non_grass_ratio"].get<double>(), 1.0);
  EXPECT_GT(w["truth_non_grass_share"].get<double>(), 0.05);  // there is a world to draw
  EXPECT_EQ(w["structure_share"].get<double>(), 1.0);
  EXPECT_EQ(w["truth_structure_share"].get<double>(), 1.0);
  EXPECT_EQ(w["structure_block_ratio"].get<double>(), 1.0);
  EXPECT_GT(w["structure_blocks"].get<int>(), 500);
  // Note [Ground flow]: the game as a model invents its edge as the game does and keeps its ground.
  const Json& flow = w["ground_flow"];
  EXPECT_GT(flow["truth_invented_non_grass_share"].get<double>(), 0.05);
  EXPECT_NEAR(flow["invented_non_grass_share"].get<double>(),
              flow["truth_invented_non_grass_share"].get<double>(), 0.02);
  EXPECT_GT(flow["kept_ground_share"].get<double>(), 0.99);
  EXPECT_GT(flow["truth_kept_ground_share"].get<double>(), 0.99);
  // Note [Structure flow]: its edge completes whole tiles and its carried view breaks none.
  const Json& made = w["structure_flow"];
  EXPECT_EQ(made["steps"].get<int>(), 3 * (600 - kWorldSkipFrames));
  EXPECT_GT(made["edge_blocks_per_step"].get<double>(), 0.0);
  EXPECT_EQ(made["edge_structure_share"].get<double>(), 1.0);
  EXPECT_TRUE(made["edge_broken_first_half_share"].is_null());  // nothing broken
  EXPECT_EQ(made["carried_broken_per_step"].get<double>(), 0.0);
  EXPECT_EQ(made["carried_broken_made_per_step"].get<double>(), 0.0);
  EXPECT_TRUE(w["per_seed"][0]["structure_flow"].is_object());
  EXPECT_TRUE(w["segments"][0]["structure_flow"].is_object());
  EXPECT_EQ(w["sprite_share"].get<double>(), 1.0);
  EXPECT_EQ(w["sprite_pixel_share"].get<double>(), 1.0);
  EXPECT_EQ(w["hud_share"].get<double>(), 1.0);
  EXPECT_GT(w["blocked_steps"].get<int>(), 10);
  EXPECT_EQ(w["blocked_still_share"].get<double>(), 1.0);
  EXPECT_EQ(w["walk_scrolled_share"].get<double>(), 1.0);
  // Its own walls are the game's: every step is held or taken as its frame before says.
  EXPECT_GT(w["own_blocked_steps"].get<int>(), 10);
  EXPECT_EQ(w["own_blocked_still_share"].get<double>(), 1.0);
  EXPECT_GT(w["own_free_steps"].get<int>(), 800);
  EXPECT_EQ(w["own_free_scrolled_share"].get<double>(), 1.0);
  EXPECT_GT(w["own_drawn_phase_steps"].get<int>(), 0);
  EXPECT_EQ(w["return_trip_steps"].get<int>(), 16);
  EXPECT_GT(w["return_patches"].get<int>(), 300);  // the things of its way out
  EXPECT_EQ(w["return_patch_share"].get<double>(), 1.0);
  EXPECT_GT(w["return_all_patches"].get<int>(), w["return_patches"].get<int>());
  EXPECT_EQ(w["return_all_patch_share"].get<double>(), 1.0);
  EXPECT_TRUE(w["return_trip_skipped_seeds"].empty());
  EXPECT_GT(w["truth_return_patch_share"].get<double>(), 0.5);
  EXPECT_LE(w["truth_return_patch_share"].get<double>(), 1.0);
  EXPECT_EQ(w["walk_frames"].get<int>(), 3 * 600);
  ASSERT_EQ(w["segments"].size(), 1u);
  EXPECT_EQ(w["segments"][0]["first_frame"].get<int>(), kWorldSkipFrames + 1);
  EXPECT_EQ(w["segments"][0]["last_frame"].get<int>(), 600);
  EXPECT_EQ(w["per_seed"].size(), 3u);
  // Every check but the terrain mix's: three walks are too few to show the game's mix (Note
  // [Game's terrain mix]; TheGamesOwnWorldsAreItsMix).
  for (const Json& c : report["checks"]) {
    if (c["name"].get<std::string>().rfind("world terrain mix", 0) == 0) continue;
    EXPECT_TRUE(c["pass"].get<bool>()) << c.dump();
  }
  EXPECT_EQ(report["checks"].size(), 7u);
  // Frames 0, 100, ..., 600 of the first seed, model above game.
  EXPECT_EQ(grids, 1);
  EXPECT_EQ(grid_width, 7 * (kSide + 2) - 2);
  EXPECT_EQ(grid_height, 2 * kSide + 2);
  const std::string table = format_eval_report(report);
  EXPECT_NE(table.find("tile structure 100.0%"), std::string::npos) << table;
}

// The return trip's way out: k moves that all walk, in runs of one key per block, never on one
// place twice, and walked back they bring the player home; found on every seed, including those
// whose spawn has no free straight way of k moves.
TEST(WorldContent, TripPathsAreFreeAndComeHome) {
  int straight_blocked = 0;
  for (uint64_t seed = 1000000; seed < 1000016; ++seed) {
    for (int run : {1, 2}) {
      ReferenceRun start(kSide, kSide, seed, run);
      const std::vector<Action> path = free_trip_path(start, 16, run);
      ASSERT_EQ(path.size(), 16u) << seed;
      for (size_t i = 0; i < path.size(); i += static_cast<size_t>(run)) {
        for (int j = 1; j < run; ++j) EXPECT_EQ(path[i + static_cast<size_t>(j)], path[i]);
      }
      ReferenceRun walk = start;
      std::set<std::pair<int, int>> places{{walk.game().player_x(), walk.game().player_y()}};
      for (Action move : path) {
        ASSERT_TRUE(walk.step(move)) << seed;
        EXPECT_TRUE(places.insert({walk.game().player_x(), walk.game().player_y()}).second);
      }
      for (size_t i = path.size(); i-- > 0;) ASSERT_TRUE(walk.step(game::opposite(path[i])));
      EXPECT_EQ(walk.game().player_x(), start.game().player_x());
      EXPECT_EQ(walk.game().player_y(), start.game().player_y());
      if (run == 1) straight_blocked += free_trip_direction(start, 16) == Action::kNone;
    }
  }
  EXPECT_GT(straight_blocked, 0);  // the case the turning way is for
}

// The game with every pixel outside the sprite and the HUD painted grass: an empty field that
// still answers the keys in its overlays.
class GrassField : public FrameSource {
 public:
  explicit GrassField(uint64_t seed) : game_(make_game_as_model(kSide, kSide, 1, seed)) { paint(); }
  std::string name() const override { return "grass field"; }
  int width() const override { return kSide; }
  int height() const override { return kSide; }
  void reset(uint64_t seed) override {
    game_->reset(seed);
    paint();
  }
  void step(Action action) override {
    game_->step(action);
    paint();
  }
  const uint8_t* rgba() const override { return frame_.data(); }
  uint64_t frame_index() const override { return game_->frame_index(); }

 private:
  void paint() {
    frame_.assign(game_->rgba(), game_->rgba() + static_cast<size_t>(kSide) * kSide * 4);
    const std::vector<game::PixelRect> overlays = game::screen_overlays(kSide, kSide);
    const uint32_t grass = game::palette::kGrass;
    for (int y = 0; y < kSide; ++y) {
      for (int x = 0; x < kSide; ++x) {
        bool inside = false;
        for (const game::PixelRect& r : overlays) inside = inside || r.contains(x, y);
        if (!inside) std::memcpy(&frame_[(static_cast<size_t>(y) * kSide + x) * 4], &grass, 4);
      }
    }
  }

  std::unique_ptr<FrameSource> game_;
  std::vector<uint8_t> frame_;
};

TEST(WorldContent, AnEmptyGrassFieldScoresBadly) {
  EvalOptions options = world_options();
  options.source_name = "grass field";
  options.make_source = [](const std::string&, uint64_t seed) {
    return std::unique_ptr<FrameSource>(std::make_unique<GrassField>(seed));
  };
  const Json report = run_eval(options);
  const Json& w = report["world"];
  // All of the game's non-grass is missing: the distance is the game's non-grass share.
  EXPECT_NEAR(w["terrain_tv"].get<double>(), w["truth_non_grass_share"].get<double>(), 1e-9);
  EXPECT_GT(w["terrain_tv"].get<double>(), 0.10);
  EXPECT_EQ(w["non_grass_ratio"].get<double>(), 0.0);
  EXPECT_EQ(w["non_grass_share"].get<double>(), 0.0);
  // Against the game's mix too (Note [Game's terrain mix]).
  EXPECT_NEAR(w["terrain_mix_tv"].get<double>(), w["game_mix"]["non_grass_share"].get<double>(),
              1e-9);
  EXPECT_EQ(w["terrain_mix_ratio"].get<double>(), 0.0);
  EXPECT_TRUE(w["structure_share"].is_null());               // nothing drawn to score ...
  EXPECT_EQ(w["structure_block_ratio"].get<double>(), 0.0);  // ... where the game drew blocks
  EXPECT_EQ(w["walk_scrolled_share"].get<double>(), 0.0);
  // A field that never scrolls brings in no ground and carries none.
  EXPECT_TRUE(w["ground_flow"]["invented_non_grass_share"].is_null());
  EXPECT_TRUE(w["ground_flow"]["kept_ground_share"].is_null());
  EXPECT_GT(w["ground_flow"]["truth_invented_non_grass_share"].get<double>(), 0.05);
  // Nor does it draw a block that is not plain grass.
  EXPECT_TRUE(w["structure_flow"]["edge_structure_share"].is_null());
  EXPECT_EQ(w["structure_flow"]["carried_broken_per_step"].get<double>(), 0.0);
  for (const Json& segment : w["segments"]) {
    EXPECT_GT(segment["terrain_tv"].get<double>(), 0.10);
    EXPECT_TRUE(segment["structure_share"].is_null());
  }
  // Blocked steps alone are fooled by a world that never scrolls; the walk check is not. A field
  // has no walls of its own to hold.
  EXPECT_EQ(w["blocked_still_share"].get<double>(), 1.0);
  EXPECT_EQ(w["own_blocked_steps"].get<int>(), 0);
  EXPECT_TRUE(w["own_blocked_still_share"].is_null());
  EXPECT_EQ(w["own_free_scrolled_share"].get<double>(), 0.0);
  // It brings its grass back as grass, every patch of it; that is no memory of a place.
  EXPECT_EQ(w["return_all_patch_share"].get<double>(), 1.0);
  EXPECT_EQ(w["return_patches"].get<int>(), 0);
  EXPECT_TRUE(w["return_patch_share"].is_null());
  for (const char* name :
       {"world terrain mix TV", "world terrain mix non-grass ratio", "world tile structure",
        "world own walls held", "world own free steps scrolled", "world return-trip tokens"}) {
    EXPECT_FALSE(check_named(report, name)["pass"].get<bool>()) << name;
  }
  // Its sprite and HUD are the game's.
  EXPECT_EQ(w["sprite_share"].get<double>(), 1.0);
  EXPECT_EQ(w["hud_share"].get<double>(), 1.0);
}

// The game playing, on each eval seed, its other world (another_world_seed): a model that
// invents a whole world of its own, as game-like as the game's.
class AnotherWorld : public FrameSource {
 public:
  explicit AnotherWorld(uint64_t seed)
      : game_(make_game_as_model(kSide, kSide, 1, another_world_seed(seed))) {}
  std::string name() const override { return "another world"; }
  int width() const override { return kSide; }
  int height() const override { return kSide; }
  void reset(uint64_t seed) override { game_->reset(another_world_seed(seed)); }
  void step(Action action) override { game_->step(action); }
  const uint8_t* rgba() const override { return game_->rgba(); }
  uint64_t frame_index() const override { return game_->frame_index(); }

 private:
  std::unique_ptr<FrameSource> game_;
};

// Note [World content]: the another-world reference is what the game's other world scores on the
// same keys, whatever the model. A model that is that world scores it exactly; the game itself,
// on the same seeds, is held to the same reference.
TEST(WorldContent, AnotherWorldOfTheGameIsTheFloor) {
  EvalOptions options = world_options();
  options.seeds = {1000005};
  options.world_frames = kWorldSkipFrames + 100;
  options.world_trip_steps = 2;
  options.source_name = "another world";
  options.make_source = [](const std::string&, uint64_t seed) {
    return std::unique_ptr<FrameSource>(std::make_unique<AnotherWorld>(seed));
  };
  const Json report = run_eval(options);
  const Json& w = report["world"];
  const Json& other = w["another_world"];
  EXPECT_EQ(other["seed_salt"].get<std::string>(), "0x616e6f74686572");
  EXPECT_EQ(another_world_seed(1000005), 1000005 ^ 0x616E6F74686572ull);
  const double tv = other["terrain_tv"].get<double>();
  EXPECT_GT(tv, 0.0);  // two worlds of the game differ on the same keys
  EXPECT_LT(tv, 1.0);
  EXPECT_DOUBLE_EQ(w["terrain_tv"].get<double>(), tv);
  EXPECT_DOUBLE_EQ(w["terrain_tv_pooled"].get<double>(), other["terrain_tv_pooled"].get<double>());
  EXPECT_DOUBLE_EQ(w["non_grass_ratio"].get<double>(), other["non_grass_ratio"].get<double>());
  ASSERT_EQ(w["per_seed"].size(), 1u);
  const Json& seed = w["per_seed"][0];
  EXPECT_DOUBLE_EQ(seed["another_world_terrain_tv"].get<double>(), tv);
  EXPECT_DOUBLE_EQ(seed["another_world_non_grass_ratio"].get<double>(),
                   seed["non_grass_ratio"].get<double>());
  ASSERT_EQ(w["segments"].size(), 1u);
  EXPECT_DOUBLE_EQ(w["segments"][0]["another_world_terrain_tv"].get<double>(), tv);

  options.source_name = "game";
  options.make_source = [](const std::string&, uint64_t seed) {
    return make_game_as_model(kSide, kSide, 1, seed);
  };
  const Json game_report = run_eval(options);
  const Json& g = game_report["world"];
  EXPECT_EQ(g["terrain_tv"].get<double>(), 0.0);
  EXPECT_EQ(g["another_world"], other);
  EXPECT_EQ(g["per_seed"][0]["another_world_terrain_tv"], seed["another_world_terrain_tv"]);
  EXPECT_EQ(g["per_seed"][0]["another_world_non_grass_ratio"],
            seed["another_world_non_grass_ratio"]);
  EXPECT_EQ(g["segments"][0]["another_world_terrain_tv"],
            w["segments"][0]["another_world_terrain_tv"]);
  const std::string table = format_eval_report(game_report);
  char line[128];
  std::snprintf(line, sizeof(line), "another world of the game on the same keys: terrain TV %.3f",
                tv);
  EXPECT_NE(table.find(line), std::string::npos) << table;
}

// Note [Game's terrain mix]: the game walking the mix's own first worlds scores, against the mix,
// the distance of their pooled histogram from the pool of all of them; the band puts the game's
// samples of as many worlds on both sides of the mix.
TEST(WorldContent, TheGamesOwnWorldsAreItsMix) {
  EvalOptions options = world_options();
  options.world_frames = kWorldSkipFrames + 200;
  options.world_trip_steps = 2;
  options.seeds.clear();
  for (uint64_t w = 0; w < 8; ++w) options.seeds.push_back(kTerrainMixFirstSeed + w);
  const Json report = run_eval(options);
  const Json& w = report["world"];

  const std::vector<TerrainHistogram> worlds = survey_terrain_mix(options, kSide, kSide);
  ASSERT_EQ(worlds.size(), static_cast<size_t>(kTerrainMixWorlds));
  TerrainHistogram first{}, all{};
  for (size_t i = 0; i < worlds.size(); ++i) {
    for (int g = 0; g < kTerrainGroupCount; ++g) {
      all[g] += worlds[i][g];
      if (i < 8) first[g] += worlds[i][g];
    }
  }
  EXPECT_NEAR(w["terrain_mix_tv"].get<double>(), total_variation(first, all), 1e-12);
  EXPECT_NEAR(w["terrain_mix_ratio"].get<double>(), non_grass_share(first) / non_grass_share(all),
              1e-12);
  EXPECT_GT(w["terrain_mix_tv"].get<double>(), 0.0);
  EXPECT_NEAR(w["game_mix"]["non_grass_share"].get<double>(), non_grass_share(all), 1e-12);
  EXPECT_EQ(w["game_mix"]["frames_per_world"].get<int>(), kWorldSkipFrames + 200);
  const Json& band = w["game_mix"]["band"];
  EXPECT_EQ(band["worlds_per_sample"].get<int>(), 8);
  EXPECT_EQ(band["samples"].get<int>(), kTerrainMixWorlds / 8);
  EXPECT_GT(band["tv_mean"].get<double>(), 0.0);
  EXPECT_GE(band["tv_max"].get<double>(), band["tv_mean"].get<double>());
  EXPECT_LT(band["ratio_min"].get<double>(), 1.0);
  EXPECT_GT(band["ratio_max"].get<double>(), 1.0);
  const std::string table = format_eval_report(report);
  EXPECT_NE(table.find("terrain mix against the game's (64 worlds)"), std::string::npos) << table;
}

TEST(WorldContent, LongWalksReportDriftPerSegment) {
  EvalOptions options = world_options();
  options.seeds = {1000003};
  options.world_frames = 2100;
  options.world_trip_steps = 4;
  const Json report = run_eval(options);
  const Json& w = report["world"];
  ASSERT_EQ(w["segments"].size(), 3u);
  const int expected[3][2] = {{201, 1000}, {1001, 2000}, {2001, 2100}};
  for (size_t s = 0; s < 3; ++s) {
    const Json& segment = w["segments"][s];
    EXPECT_EQ(segment["first_frame"].get<int>(), expected[s][0]);
    EXPECT_EQ(segment["last_frame"].get<int>(), expected[s][1]);
    EXPECT_EQ(segment["terrain_tv"].get<double>(), 0.0);
    EXPECT_EQ(segment["non_grass_ratio"].get<double>(), 1.0);
    EXPECT_GT(segment["another_world_terrain_tv"].get<double>(), 0.0);
    EXPECT_LE(segment["another_world_terrain_tv"].get<double>(), 1.0);
  }
  EXPECT_EQ(w["return_trip_steps"].get<int>(), 4);
  const std::string table = format_eval_report(report);
  // The last segment's row: its mix columns, then the same-seed ones (the game's own: 0 and 1).
  const size_t row = table.find("| 2001-2100     |");
  ASSERT_NE(row, std::string::npos) << table;
  EXPECT_NE(table.find("|    0.000 |            1.00 |    100.0% |", row), std::string::npos)
      << table;
  for (const Json& segment : w["segments"]) {
    EXPECT_GT(segment["terrain_mix_tv"].get<double>(), 0.0);
    EXPECT_GT(segment["terrain_mix_ratio"].get<double>(), 0.0);
  }
}

TEST(WorldContent, AShortWalkHasNoMixToReport) {
  EvalOptions options = world_options();
  options.seeds = {1000004};
  options.world_frames = 150;  // all inside the frames left out
  const Json w = run_eval(options)["world"];
  EXPECT_TRUE(w["terrain_tv"].is_null());
  EXPECT_TRUE(w["structure_share"].is_null());
  EXPECT_TRUE(w["segments"].empty());
  EXPECT_EQ(w["sprite_share"].get<double>(), 1.0);
  options.world_frames = 0;
  EXPECT_THROW(run_eval(options), Error);
}

}  // namespace
}  // namespace wc::eval
