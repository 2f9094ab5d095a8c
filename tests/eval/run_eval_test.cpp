// The whole eval on real components: the reference game as a perfect model (every metric at its
// ceiling, which checks the harness's alignment of seeds, seeding and actions), and a tiny
// random-weight world model through every section with small counts.
#include <gtest/gtest.h>

#include "engine/core/error.h"
#include "engine/eval/eval_report.h"
#include "engine/eval/eval_session.h"
#include "engine/eval/game_as_model.h"
#include "engine/eval/memory_trip.h"
#include "engine/eval/psnr.h"
#include "engine/eval/run_eval.h"
#include "tests/eval/eval_test_config.h"

namespace wc::eval {
namespace {

using Json = nlohmann::json;

EvalOptions game_options() {
  EvalOptions options;
  options.config = testing::eval_tiny_config(128);
  options.seeds = {1000000, 1000001};
  options.source_name = "game";
  options.make_source = [](const std::string&, uint64_t seed) {
    return make_game_as_model(128, 128, 1, seed);
  };
  options.responsiveness_frames = 120;
  options.idle_frames = 16;
  options.stability_frames = 60;
  options.stability_probe_frames = 6;
  options.policy_frames = 20;
  options.speed_frames = 5;
  return options;
}

TEST(RunEval, TheGameItselfScoresTheCeiling) {
  const Json report = run_eval(game_options());
  const Json& r = report["responsiveness"];
  EXPECT_GT(r["scored_steps"].get<int>(), 90);
  EXPECT_EQ(r["share"].get<double>(), 1.0);
  EXPECT_EQ(r["estimator_share_on_truth"].get<double>(), 1.0);
  // On the frames where the waves drift their pixel, a view with much water reads one pixel off
  // (a scroll of 8 read as 7 or 9, or a blocked step next to water as a 1-pixel scroll): the
  // direction is still right, the exact shift and stillness nearly always.
  EXPECT_GE(r["exact_shift_share"].get<double>(), 0.95);
  if (r["blocked_steps"].get<int>() > 0) {
    EXPECT_GE(r["blocked_still_share"].get<double>(), 0.95);
  }
  EXPECT_EQ(r["idle_still_share"].get<double>(), 1.0);
  // Note [Responsiveness breakdown]: every part of the game's own run is right, at its own detail.
  for (const char* part : {"hold_first_share", "hold_later_share", "early_share", "late_share",
                           "early_detail_ratio", "late_detail_ratio"}) {
    EXPECT_EQ(r[part].get<double>(), 1.0) << part;
  }
  EXPECT_EQ(r["still_share"].get<double>(), 0.0);

  EXPECT_EQ(report["idle"]["psnr_db"].get<double>(), kPsnrCapDb);
  EXPECT_NEAR(report["idle"]["ssim"].get<double>(), 1.0, 1e-12);

  const Json& m = report["memory"];
  EXPECT_EQ(m["steps"].get<int>(), 3);  // default window 7 frames, one frame per block
  EXPECT_TRUE(m["fits_window"].get<bool>());
  EXPECT_EQ(m["psnr_db"].get<double>(), m["truth_psnr_db"].get<double>());
  EXPECT_GT(m["truth_psnr_db"].get<double>(), 25.0);
  EXPECT_EQ(m["trip_steps"].get<int>(), 2 * 3 * static_cast<int>(m["per_seed"].size()));
  EXPECT_EQ(m["trip_scrolled_share"].get<double>(), 1.0);

  const Json& s = report["stability"];
  EXPECT_TRUE(s["finite"].get<bool>());
  EXPECT_EQ(s["idle_self_psnr_start_db"], s["truth_idle_self_psnr_start_db"]);
  EXPECT_EQ(s["idle_self_psnr_end_db"], s["truth_idle_self_psnr_end_db"]);
  EXPECT_EQ(s["idle_psnr_vs_truth_start_db"].get<double>(), kPsnrCapDb);
  EXPECT_EQ(s["sprite_psnr_vs_truth_start_db"].get<double>(), kPsnrCapDb);
  EXPECT_EQ(s["sprite_psnr_vs_truth_end_db"].get<double>(), kPsnrCapDb);
  // The round trip brings the true camera home, so the game passes its own stability check.
  EXPECT_TRUE(s["returned_to_start"].get<bool>());
  EXPECT_TRUE(s["within_1db"].get<bool>()) << s.dump();

  for (const Json& row : report["policies"]["rows"]) {
    if (row["policy"] == "dense") continue;
    EXPECT_EQ(row["psnr_db"].get<double>(), kPsnrCapDb) << row["policy"];
    EXPECT_EQ(row["flicker_vs_dense"].get<double>(), 1.0) << row["policy"];
  }
  EXPECT_EQ(report["source"], "game");
  const std::string table = format_eval_report(report);
  EXPECT_NE(table.find("responsiveness   100.0%"), std::string::npos) << table;
}

// Note [Still trips]: a source that ignores the keys shows the same frame on the way back and
// scores the PSNR cap, but its trip never scrolled, and the report says so and fails it.
TEST(RunEval, AStillTripFailsTheMemoryCheck) {
  struct Still : FrameSource {
    std::unique_ptr<FrameSource> game;
    std::string name() const override { return "still"; }
    int width() const override { return game->width(); }
    int height() const override { return game->height(); }
    void reset(uint64_t seed) override { game->reset(seed); }
    void step(Action) override { game->step(Action::kNone); }
    const uint8_t* rgba() const override { return game->rgba(); }
    uint64_t frame_index() const override { return game->frame_index(); }
  };
  EvalOptions options = game_options();
  options.metrics = {Metric::kMemory};
  options.make_source = [](const std::string&, uint64_t seed) {
    auto still = std::make_unique<Still>();
    still->game = make_game_as_model(128, 128, 1, seed);
    return std::unique_ptr<FrameSource>(std::move(still));
  };
  const Json report = run_eval(options);
  EXPECT_EQ(report["memory"]["trip_scrolled_share"].get<double>(), 0.0);
  bool psnr_passed = false, scrolled_failed = false;
  for (const Json& c : report["checks"]) {
    if (c["name"] == "return-trip PSNR dB") psnr_passed = c["pass"].get<bool>();
    if (c["name"] == "return trip scrolled") scrolled_failed = !c["pass"].get<bool>();
  }
  EXPECT_TRUE(psnr_passed);      // the number alone is fooled ...
  EXPECT_TRUE(scrolled_failed);  // ... the trip check is not
}

TEST(RunEval, MemoryTripLengthFollowsTheWindow) {
  EXPECT_EQ(default_memory_steps(7, 1), 3);
  EXPECT_EQ(default_memory_steps(16, 1), 7);
  EXPECT_EQ(default_memory_steps(2, 1), 1);
  EXPECT_EQ(default_memory_steps(12, 3), 3);  // 4.5 rounded down to whole blocks
  EXPECT_EQ(default_memory_steps(0, 1), 32);
  EvalOptions options = game_options();
  options.metrics = {Metric::kMemory};
  options.window = 21;
  EXPECT_EQ(run_eval(options)["memory"]["steps"].get<int>(), 10);
  options.memory_steps = 12;
  const Json longer = run_eval(options)["memory"];
  EXPECT_EQ(longer["steps"].get<int>(), 12);
  EXPECT_FALSE(longer["fits_window"].get<bool>());
}

TEST(RunEval, TinyModelRunsEverySection) {
  EvalOptions options;
  options.config = testing::eval_tiny_config(32);
  options.seeds = {1000000, 1000001};
  options.responsiveness_frames = 6;
  options.idle_frames = 4;
  options.stability_frames = 10;
  options.stability_probe_frames = 3;
  options.policy_frames = 12;
  options.speed_frames = 3;
  options.speed_warmup = 2;
  options.world_frames = 8;
  options.world_trip_steps = 2;
  // A headcast forced to cast every head Global attends exactly like dense over the same window.
  options.policies = {"headcast", "dummy", "tempcache", "combined"};
  options.settings["headcast"] = {{"cast", {{"mix", {0, 0, 0, 2}}}}};
  int progress_lines = 0;
  options.progress = [&progress_lines](const std::string&) { ++progress_lines; };
  const Json report = run_eval(options);
  EXPECT_GT(progress_lines, 8);
  for (const char* key : {"responsiveness", "idle", "memory", "stability", "policies", "speed",
                          "world", "checks", "seeds", "device", "dtype", "window_frames"}) {
    EXPECT_TRUE(report.contains(key)) << key;
  }
  const double share = report["responsiveness"]["share"].is_null()
                           ? 0.0
                           : report["responsiveness"]["share"].get<double>();
  EXPECT_GE(share, 0.0);
  EXPECT_LE(share, 1.0);
  const double idle = report["idle"]["psnr_db"].get<double>();
  EXPECT_GT(idle, 0.0);
  EXPECT_LT(idle, kPsnrCapDb);
  EXPECT_TRUE(report["stability"]["finite"].get<bool>());
  const Json& s = report["stability"];
  EXPECT_GE(s["frames"].get<int>(), 10);
  EXPECT_EQ(s["generated_frames"].get<int>(), s["frames"].get<int>() + 2 * 3);
  EXPECT_EQ((s["frames"].get<int>() + 3) % 4, 0);  // both probes at one water-animation phase
  const Json& rows = report["policies"]["rows"];
  ASSERT_EQ(rows.size(), 5u);
  for (const Json& row : rows) {
    if (row["policy"] == "dense") continue;
    EXPECT_GT(row["compared_frames"].get<int>(), 0);
    const double p = row["psnr_db"].get<double>(), s = row["ssim"].get<double>();
    EXPECT_GT(p, 5.0) << row["policy"];
    EXPECT_LE(p, kPsnrCapDb);
    EXPECT_GE(s, -1.0);
    EXPECT_LE(s, 1.0);
    if (row["policy"] == "headcast") {
      EXPECT_GT(p, 60.0);  // numerically dense
      EXPECT_NEAR(row["flicker_vs_dense"].get<double>(), 1.0, 1e-3);
      EXPECT_EQ(row["heads_by_type"]["global"].get<int>(), 4);
    }
  }
  ASSERT_EQ(report["speed"]["rows"].size(), 5u);
  for (const Json& row : report["speed"]["rows"]) {
    EXPECT_GT(row["fps"].get<double>(), 0.0);
    EXPECT_GE(row["frame_ms_p99"].get<double>(), row["frame_ms_p50"].get<double>());
  }
  for (const Json& check : report["checks"]) {
    EXPECT_TRUE(check.contains("pass") && check.contains("target")) << check.dump();
  }
}

TEST(RunEval, BlocksOfTwoFramesHoldActionsPerBlock) {
  EvalOptions options;
  options.config = testing::eval_tiny_config(32);
  options.config.frames_per_block = 2;
  options.seeds = {1000002};
  options.seed_frames = 2;
  options.responsiveness_frames = 6;
  options.idle_frames = 4;
  options.stability_frames = 6;
  options.stability_probe_frames = 2;
  options.policy_frames = 20;
  options.speed_frames = 4;
  options.speed_warmup = 2;
  options.world_frames = 6;
  options.world_trip_steps = 2;
  options.policies = {"headcast"};
  const Json report = run_eval(options);
  EXPECT_EQ(report["window_frames"].get<int>(), 14);
  EXPECT_EQ(report["memory"]["steps"].get<int>(), 6);  // (14 − 2) / 2, whole blocks
  EXPECT_EQ(report["policies"]["skipped_frames"].get<int>(), 16);
  for (const Json& row : report["policies"]["rows"]) {
    EXPECT_TRUE(row["block_flicker"].is_number()) << row.dump();  // pairs inside blocks exist
  }
  const auto actions = eval_actions(options, 7, 40);
  for (size_t i = 1; i < actions.size(); i += 2) EXPECT_EQ(actions[i], actions[i - 1]);
  options.memory_steps = 3;
  EXPECT_THROW(run_eval(options), Error);
}

TEST(RunEval, RejectsBadOptionsBeforeRunning) {
  EvalOptions options = game_options();
  options.seeds.clear();
  EXPECT_THROW(run_eval(options), Error);
  options = game_options();
  options.seed_frames = 0;
  EXPECT_THROW(run_eval(options), Error);
  options.seed_frames = kMaxSeedFrames + 1;
  try {
    run_eval(options);
    FAIL() << "a seeding of " << options.seed_frames << " frames was accepted";
  } catch (const Error& error) {
    EXPECT_NE(std::string(error.what()).find("--seed-frames"), std::string::npos) << error.what();
  }
  // Unknown policy settings fail up front, naming the key.
  EvalOptions model;
  model.config = testing::eval_tiny_config(32);
  model.seeds = {1};
  model.settings["headcast"] = {{"windw", 7}};
  try {
    run_eval(model);
    FAIL() << "no error";
  } catch (const Error& error) {
    EXPECT_NE(std::string(error.what()).find("windw"), std::string::npos) << error.what();
  }
}

}  // namespace
}  // namespace wc::eval
