// The world-model source through the C ABI: live settings, policy switching, saved states (good,
// missing, corrupt, truncated) and stats with head casts. game-small with random weights on the
// CPU; few frames, since a block takes ~0.3 s there.
#include <gtest/gtest.h>

#include <worldcast/worldcast.h>
#include <nlohmann/json.hpp>

#include <cmath>
#include <cstddef>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "tests/plugin/plugin_test_util.h"

namespace wc::plugin_test {
namespace {

namespace fs = std::filesystem;

// A JSON text read through the C ABI's two-call idiom by `get`.
std::string read_text(wc_session session,
                      wc_result (*get)(wc_session, char*, uint32_t, uint32_t*)) {
  uint32_t length = 0;
  EXPECT_EQ(get(session, nullptr, 0, &length), WC_RESULT_OK);
  std::string text(length, '\0');
  EXPECT_EQ(get(session, text.data(), length, &length), WC_RESULT_OK);
  text.resize(length - 1);
  return text;
}

std::string settings(wc_session session) {
  return read_text(session, wc_session_get_settings);
}

fs::path temp_dir(const std::string& name) {
  const fs::path dir = fs::temp_directory_path() / ("wc_plugin_model_" + name);
  fs::remove_all(dir);
  fs::create_directories(dir);
  return dir;
}

std::string play_settings(wc_session session) {
  return read_text(session, wc_session_get_play_settings);
}

// Note [Play settings] through the C ABI: a token model's settings change live and are checked
// before anything changes; a pixel model has none and refuses every key.
TEST(PluginModel, PlaySettingsChangeLiveOrAreRefused) {
  Runtime runtime;
  wc_session_desc desc = model_desc("dense", "{\"window\": 2}");
  desc.config = WC_TEST_GAME_TILES_CONFIG;
  Session session(runtime.get(), desc);
  const nlohmann::json before = nlohmann::json::parse(play_settings(session.get()));
  EXPECT_EQ(before.at("passes"), 3) << before;
  step(session.get(), WC_ACTION_RIGHT);
  const char* bad[] = {"{\"passes\": ",
                       "[]",
                       "{\"passes\": 0}",
                       "{\"passes\": 2.5}",
                       "{\"temperature\": 1e400}",
                       "{\"bogus\": 1}",
                       "{\"passes\": 2, \"sure\": 2}"};
  for (const char* json : bad) {
    EXPECT_EQ(wc_session_set_play_settings(session.get(), json), WC_RESULT_ERROR_INVALID_ARGUMENT)
        << json;
    EXPECT_EQ(nlohmann::json::parse(play_settings(session.get())), before) << json;
  }
  EXPECT_NE(session_error(session.get()).find("sure"), std::string::npos)
      << session_error(session.get());
  EXPECT_EQ(wc_session_set_play_settings(session.get(), nullptr), WC_RESULT_ERROR_INVALID_ARGUMENT);
  ASSERT_EQ(wc_session_set_play_settings(session.get(), "{\"passes\": 2, \"temperature\": 0.5}"),
            WC_RESULT_OK)
      << session_error(session.get());
  nlohmann::json after = before;
  after["passes"] = 2;
  after["temperature"] = 0.5;
  EXPECT_EQ(nlohmann::json::parse(play_settings(session.get())), after);
  step(session.get(), WC_ACTION_RIGHT);
  ASSERT_EQ(wc_session_reset(session.get(), 9), WC_RESULT_OK);
  EXPECT_EQ(nlohmann::json::parse(play_settings(session.get())), after);

  Session pixel(runtime.get(), model_desc());
  EXPECT_EQ(play_settings(pixel.get()), "{}");
  EXPECT_EQ(wc_session_set_play_settings(pixel.get(), "{}"), WC_RESULT_OK);
  EXPECT_EQ(wc_session_set_play_settings(pixel.get(), "{\"passes\": 2}"),
            WC_RESULT_ERROR_INVALID_ARGUMENT);
  EXPECT_NE(session_error(pixel.get()).find("draws no tokens"), std::string::npos)
      << session_error(pixel.get());
}

TEST(PluginModel, LiveSettingsAreValidatedBeforeAnythingChanges) {
  Runtime runtime;
  Session session(runtime.get(), model_desc("headcast", "{\"window\": 2}"));
  const std::string before = settings(session.get());
  EXPECT_NE(before.find("\"window\":2"), std::string::npos) << before;

  EXPECT_EQ(wc_session_set_settings(session.get(), "{\"theta_sink\": "),
            WC_RESULT_ERROR_INVALID_ARGUMENT);
  EXPECT_NE(session_error(session.get()).find("not valid JSON"), std::string::npos);
  EXPECT_EQ(wc_session_set_settings(session.get(), "[]"), WC_RESULT_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(wc_session_set_settings(session.get(), nullptr), WC_RESULT_ERROR_INVALID_ARGUMENT);
  // One good key and one bad value: nothing may change.
  EXPECT_EQ(wc_session_set_settings(session.get(), "{\"theta_sink\": 0.5, \"window\": -4}"),
            WC_RESULT_ERROR_INVALID_ARGUMENT);
  EXPECT_NE(session_error(session.get()).find("window"), std::string::npos)
      << session_error(session.get());
  EXPECT_EQ(settings(session.get()), before);
  EXPECT_EQ(wc_session_set_settings(session.get(), "{\"bogus\": 1}"),
            WC_RESULT_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(settings(session.get()), before);

  ASSERT_EQ(wc_session_set_settings(session.get(), "{\"theta_sink\": 0.5}"), WC_RESULT_OK)
      << session_error(session.get());
  EXPECT_NE(settings(session.get()).find("\"theta_sink\":0.5"), std::string::npos)
      << settings(session.get());

  // Policies: another one keeps the game going (the frame stays); an unknown one or bad
  // settings change nothing.
  const std::vector<uint8_t> frame = cpu_frame(session.get());
  EXPECT_EQ(wc_session_set_policy(session.get(), "nope", nullptr),
            WC_RESULT_ERROR_INVALID_ARGUMENT);
  EXPECT_NE(session_error(session.get()).find("nope"), std::string::npos);
  EXPECT_EQ(wc_session_set_policy(session.get(), nullptr, nullptr),
            WC_RESULT_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(wc_session_set_policy(session.get(), "dense", "{\"window\": -1}"),
            WC_RESULT_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(wc_session_set_policy(session.get(), "dense", "{\"window\": "),
            WC_RESULT_ERROR_INVALID_ARGUMENT);
  wc_session_info info{};
  info.struct_size = sizeof(info);
  ASSERT_EQ(wc_session_get_info(session.get(), &info), WC_RESULT_OK);
  EXPECT_STREQ(info.policy, "headcast");
  EXPECT_EQ(info.num_layers, 8);
  EXPECT_EQ(info.num_heads, 4);

  ASSERT_EQ(wc_session_set_policy(session.get(), "dense", "{\"window\": 3}"), WC_RESULT_OK)
      << session_error(session.get());
  ASSERT_EQ(wc_session_get_info(session.get(), &info), WC_RESULT_OK);
  EXPECT_STREQ(info.policy, "dense");
  EXPECT_EQ(settings(session.get()), "{\"window\":3}");
  EXPECT_EQ(cpu_frame(session.get()), frame);
  step(session.get(), WC_ACTION_UP);
  wc_stats stats{};
  stats.struct_size = sizeof(stats);
  ASSERT_EQ(wc_session_get_stats(session.get(), &stats), WC_RESULT_OK);
  EXPECT_EQ(stats.frame_index, 1u);
  EXPECT_EQ(stats.heads_per_type[WC_HEAD_DENSE], 32);
}

// Note [Memory budget]: a valid config too large for any machine is refused before allocation,
// with OUT_OF_MEMORY and a message naming what it needs; the runtime goes on.
TEST(PluginModel, AModelThatCannotFitIsRefusedAsOutOfMemory) {
  Runtime runtime;
  std::ifstream in(WC_TEST_GAME_SMALL_CONFIG);
  nlohmann::json config = nlohmann::json::parse(in);
  config["hidden"] = 65536;
  config["layers"] = 1024;
  config["mlp"] = 1 << 20;
  config["heads"] = 512;
  config["head_dim"] = 128;
  const fs::path dir = temp_dir("giant");
  const std::string path = (dir / "giant.json").string();
  std::ofstream(path) << config.dump();
  wc_session_desc desc = model_desc();
  desc.config = path.c_str();
  wc_session session = 0;
  EXPECT_EQ(wc_session_create(runtime.get(), &desc, &session), WC_RESULT_ERROR_OUT_OF_MEMORY);
  EXPECT_EQ(session, wc_session{0});
  EXPECT_NE(last_error().find("giant.json: needs "), std::string::npos) << last_error();
  Session fine(runtime.get(), model_desc());
  step(fine.get(), WC_ACTION_RIGHT);
  fs::remove_all(dir);
}

TEST(PluginModel, SavedStatesReplayAndBadOnesAreRejected) {
  Runtime runtime;
  Session session(runtime.get(), model_desc("dense", nullptr, 21));
  // Settings changed live are part of what a saved state reproduces.
  ASSERT_EQ(wc_session_set_settings(session.get(), "{\"window\": 4}"), WC_RESULT_OK);
  step(session.get(), WC_ACTION_RIGHT);
  step(session.get(), WC_ACTION_DOWN);
  uint64_t index = 0;
  const std::vector<uint8_t> saved_frame = cpu_frame(session.get(), 128, 128, &index);
  ASSERT_EQ(index, 2u);

  const fs::path dir = temp_dir("states");
  const std::string good = (dir / "good.state").string();
  ASSERT_EQ(wc_session_save_state(session.get(), good.c_str()), WC_RESULT_OK)
      << session_error(session.get());
  EXPECT_EQ(wc_session_save_state(session.get(), (dir / "no/such/dir/x.state").string().c_str()),
            WC_RESULT_ERROR_IO);
  EXPECT_EQ(wc_session_save_state(session.get(), nullptr), WC_RESULT_ERROR_INVALID_ARGUMENT);

  // Move on, then load: the frame and index come back.
  step(session.get(), WC_ACTION_LEFT);
  ASSERT_NE(cpu_frame(session.get()), saved_frame);
  ASSERT_EQ(wc_session_load_state(session.get(), good.c_str()), WC_RESULT_OK)
      << session_error(session.get());
  EXPECT_EQ(cpu_frame(session.get(), 128, 128, &index), saved_frame);
  EXPECT_EQ(index, 2u);
  EXPECT_EQ(settings(session.get()), "{\"window\":4}");

  EXPECT_EQ(wc_session_load_state(session.get(), (dir / "missing.state").string().c_str()),
            WC_RESULT_ERROR_IO);
  const std::string garbage = (dir / "garbage.state").string();
  std::ofstream(garbage, std::ios::binary) << "this is not a saved state";
  EXPECT_EQ(wc_session_load_state(session.get(), garbage.c_str()), WC_RESULT_ERROR_BAD_CHECKPOINT);
  EXPECT_NE(session_error(session.get()).find("garbage.state"), std::string::npos)
      << session_error(session.get());
  const std::string truncated = (dir / "truncated.state").string();
  fs::copy_file(good, truncated);
  fs::resize_file(truncated, fs::file_size(good) / 2);
  EXPECT_EQ(wc_session_load_state(session.get(), truncated.c_str()),
            WC_RESULT_ERROR_BAD_CHECKPOINT);
  // Failed loads left the session as it was.
  EXPECT_EQ(cpu_frame(session.get(), 128, 128, &index), saved_frame);
  EXPECT_EQ(index, 2u);

  // A state from another seed replays into another rollout; from other weights it diverges.
  Session other_weights(runtime.get(), [] {
    wc_session_desc desc = model_desc("dense", nullptr, 21);
    desc.weights_seed = 4;
    return desc;
  }());
  EXPECT_EQ(wc_session_load_state(other_weights.get(), good.c_str()),
            WC_RESULT_ERROR_BAD_CHECKPOINT);
  EXPECT_NE(session_error(other_weights.get()).find("diverged"), std::string::npos)
      << session_error(other_weights.get());
}

TEST(PluginModel, StatsReportTimesCachesAndHeadCasts) {
  Runtime runtime;
  // A small window so HeadCast classifies within a few blocks.
  Session session(runtime.get(), model_desc("headcast", "{\"window\": 2}"));
  for (int i = 0; i < 3; ++i) step(session.get(), WC_ACTION_RIGHT);

  wc_stats stats{};
  stats.struct_size = sizeof(stats);
  ASSERT_EQ(wc_session_get_stats(session.get(), &stats), WC_RESULT_OK);
  EXPECT_EQ(stats.frame_index, 3u);
  EXPECT_EQ(stats.blocks, 3);
  EXPECT_GT(stats.step_ms, 0.0);
  EXPECT_GT(stats.model_ms, 0.0);
  EXPECT_GT(stats.mean_model_ms, 0.0);
  EXPECT_GT(stats.cache_bytes, 0);
  EXPECT_GT(stats.cache_tokens, 0);
  EXPECT_EQ(stats.num_layers, 8);
  EXPECT_EQ(stats.num_heads, 4);
  EXPECT_EQ(stats.classified, 1);
  int heads = 0;
  for (int t = 0; t < WC_HEAD_TYPE_COUNT; ++t) heads += stats.heads_per_type[t];
  EXPECT_EQ(heads, 32);
  EXPECT_EQ(stats.heads_per_type[WC_HEAD_DENSE], 0) << "every head is cast after classification";

  std::vector<uint8_t> types(32, 0xff);
  std::vector<float> scores(4 * 32, -7.0f);
  stats.head_capacity = 32;
  stats.head_types = types.data();
  stats.head_scores = scores.data();
  ASSERT_EQ(wc_session_get_stats(session.get(), &stats), WC_RESULT_OK);
  int counted[WC_HEAD_TYPE_COUNT] = {};
  for (uint8_t type : types) {
    ASSERT_LT(type, WC_HEAD_TYPE_COUNT);
    ++counted[type];
  }
  for (int t = 0; t < WC_HEAD_TYPE_COUNT; ++t) EXPECT_EQ(counted[t], stats.heads_per_type[t]);
  for (float score : scores) EXPECT_TRUE(std::isfinite(score)) << "every head was scored";
  EXPECT_EQ(stats.head_types, types.data()) << "the caller's pointers are kept";

  std::vector<uint8_t> few(5, 0xff);
  stats.head_capacity = 5;
  stats.head_types = few.data();
  stats.head_scores = nullptr;
  EXPECT_EQ(wc_session_get_stats(session.get(), &stats), WC_RESULT_INCOMPLETE);
  EXPECT_TRUE(std::equal(few.begin(), few.end(), types.begin()));
  stats.head_types = nullptr;
  EXPECT_EQ(wc_session_get_stats(session.get(), &stats), WC_RESULT_ERROR_INVALID_ARGUMENT);
  stats.head_capacity = 0;
  stats.struct_size = 40;
  EXPECT_EQ(wc_session_get_stats(session.get(), &stats), WC_RESULT_ERROR_VERSION_MISMATCH);
  EXPECT_EQ(wc_session_get_stats(session.get(), nullptr), WC_RESULT_ERROR_INVALID_ARGUMENT);
}

TEST(PluginModel, AnnsaReportsTheHistoryItAttends) {
  Runtime runtime;
  Session session(runtime.get(), model_desc("annsa", "{\"window\": 3, \"ann_bits\": 4}"));
  for (int i = 0; i < 3; ++i) step(session.get(), WC_ACTION_LEFT);
  wc_stats stats{};
  stats.struct_size = sizeof(stats);
  ASSERT_EQ(wc_session_get_stats(session.get(), &stats), WC_RESULT_OK);
  EXPECT_GT(stats.ann_history_pairs, 0.0);
  EXPECT_GT(stats.ann_allowed_pairs, 0.0);
  EXPECT_LE(stats.ann_allowed_pairs, stats.ann_history_pairs);
  EXPECT_GE(stats.ann_gathered_pairs, stats.ann_allowed_pairs);
  EXPECT_GT(stats.ann_largest_bucket, 0.0);
  EXPECT_LE(stats.ann_largest_bucket, 1.0);
  EXPECT_NE(settings(session.get()).find("\"ann_bits\":4"), std::string::npos);
  // Out-of-range AnnSA settings are refused by name, and nothing changes.
  EXPECT_EQ(wc_session_set_settings(session.get(), "{\"ann_bits\": 0}"),
            WC_RESULT_ERROR_INVALID_ARGUMENT);
  EXPECT_NE(session_error(session.get()).find("ann_bits"), std::string::npos);
  // A host built against ABI 1.0 gets the fields it knows; the new ones are not written.
  struct {
    wc_stats stats;
    unsigned char guard[8];
  } old{};
  std::memset(&old, 0x5a, sizeof(old));
  old.stats.struct_size = static_cast<uint32_t>(offsetof(wc_stats, ann_history_pairs));
  old.stats.head_capacity = 0;
  old.stats.head_types = nullptr;
  old.stats.head_scores = nullptr;
  ASSERT_EQ(wc_session_get_stats(session.get(), &old.stats), WC_RESULT_OK);
  EXPECT_EQ(old.stats.frame_index, 3u);
  const auto* tail = reinterpret_cast<const unsigned char*>(&old.stats.ann_history_pairs);
  for (size_t i = 0; i < sizeof(double); ++i) EXPECT_EQ(tail[i], 0x5a) << "byte " << i;
}

}  // namespace
}  // namespace wc::plugin_test
