// Frames through the plugin equal the engine's own: the example C host against the viewer's
// headless PNGs (reference game), and plugin sessions against a wc::rollout::Session driven
// directly with the same config, weights, seed, policy and actions (world model).
#include <gtest/gtest.h>
#include <worldcast/worldcast.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "engine/game/action_script.h"
#include "engine/model/dit.h"
#include "engine/model/model_config.h"
#include "engine/model/weights.h"
#include "engine/rollout/session.h"
#include "tests/plugin/plugin_test_util.h"
#include "tests/plugin/png_reader.h"

namespace wc::plugin_test {
namespace {

namespace fs = std::filesystem;

fs::path temp_dir(const std::string& name) {
  const fs::path dir = fs::temp_directory_path() / ("wc_plugin_frames_" + name);
  fs::remove_all(dir);
  fs::create_directories(dir);
  return dir;
}

int run(const std::string& command) {
  const int status = std::system((command + " > /dev/null").c_str());
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

std::string frame_file(const fs::path& dir, int index) {
  char name[32];
  std::snprintf(name, sizeof(name), "frame_%05d.png", index);
  return (dir / name).string();
}

std::vector<Action> walk_actions() {
  return game::load_action_script(WC_TEST_DATA "/walk.actions");
}

TEST(PluginFrames, CHostEqualsTheViewersHeadlessFrames) {
  const int frames = 9;  // the script's 7 actions, then 2 frames of none
  const fs::path viewer = temp_dir("viewer");
  const fs::path host = temp_dir("host");
  const std::string actions = WC_TEST_DATA "/walk.actions";
  ASSERT_EQ(run(std::string(WC_TEST_WORLDCAST) + " play --headless --source game --width 96 " +
                "--height 80 --seed 17 --frames " + std::to_string(frames) + " --actions " +
                actions + " --out " + viewer.string()),
            0);
  ASSERT_EQ(run(std::string(WC_TEST_HOST) + " --game 96x80 --seed 17 --frames " +
                std::to_string(frames) + " --actions " + actions + " --out " + host.string()),
            0);
  for (int i = 0; i < frames; ++i) {
    const Png expected = read_png(frame_file(viewer, i));
    const Png actual = read_png(frame_file(host, i));
    ASSERT_EQ(expected.width, 96) << frame_file(viewer, i);
    ASSERT_EQ(expected.height, 80);
    ASSERT_EQ(actual.width, 96) << frame_file(host, i);
    ASSERT_EQ(actual.height, 80);
    EXPECT_EQ(actual.rgba, expected.rgba) << "frame " << i;
  }
  // The frames differ from each other (the walk scrolls), so equality above means something.
  EXPECT_NE(read_png(frame_file(host, 0)).rgba, read_png(frame_file(host, 4)).rgba);
}

// The same rollout as the plugin's model_desc(policy): game-small, random weights seed 3.
std::unique_ptr<rollout::Session> direct_session(const std::string& policy, uint64_t seed,
                                                 const std::string& weights = "") {
  rollout::SessionOptions options;
  options.weights_seed = 3;
  return rollout::Session::create(model::load_model_config(WC_TEST_GAME_SMALL_CONFIG), weights,
                                  policy, nlohmann::json::object(), seed, at::kCPU, options);
}

std::vector<uint8_t> frame_of(const rollout::Session& session) {
  const uint8_t* rgba = session.rgba();
  return std::vector<uint8_t>(rgba, rgba + session.width() * session.height() * 4);
}

TEST(PluginFrames, ModelFramesEqualASessionDrivenDirectly) {
  const std::vector<Action> actions = walk_actions();
  auto direct = direct_session("headcast", 5);
  Runtime runtime;
  Session session(runtime.get(), model_desc("headcast", nullptr, 5));
  EXPECT_EQ(cpu_frame(session.get()), frame_of(*direct)) << "the seeded first frame";
  for (int i = 0; i < 3; ++i) {
    direct->step(actions[static_cast<size_t>(i)]);
    step(session.get(), static_cast<int32_t>(actions[static_cast<size_t>(i)]));
    EXPECT_EQ(cpu_frame(session.get()), frame_of(*direct)) << "frame " << i + 1;
  }
  // Different actions give different frames, so the comparison can fail.
  direct->step(Action::kLeft);
  step(session.get(), WC_ACTION_RIGHT);
  EXPECT_NE(cpu_frame(session.get()), frame_of(*direct));
}

TEST(PluginFrames, CHostModelFramesEqualASessionDrivenDirectly) {
  const fs::path host = temp_dir("host_model");
  ASSERT_EQ(run(std::string(WC_TEST_HOST) + " --config " WC_TEST_GAME_SMALL_CONFIG +
                " --weights-seed 3 --policy dense --seed 9 --frames 2 --actions " WC_TEST_DATA
                "/walk.actions --out " +
                host.string()),
            0);
  const std::vector<Action> actions = walk_actions();
  auto direct = direct_session("dense", 9);
  for (int i = 0; i < 2; ++i) {
    direct->step(actions[static_cast<size_t>(i)]);
    const Png png = read_png(frame_file(host, i));
    ASSERT_EQ(png.width, 128);
    EXPECT_EQ(png.rgba, frame_of(*direct)) << "frame " << i;
  }
}

TEST(PluginFrames, WeightsDirectoryLoadsAndACorruptShardIsRejected) {
  // A weights folder as `worldcast train` writes it: config.json + safetensors shards.
  const fs::path weights = temp_dir("weights");
  const model::ModelConfig config = model::load_model_config(WC_TEST_GAME_SMALL_CONFIG);
  model::CausalDiT dit(config);
  model::init_random_weights(dit, 77);
  model::save_weights(dit, weights.string(), Dtype::kF32, 2ull << 20);
  fs::copy_file(WC_TEST_GAME_SMALL_CONFIG, weights / "config.json");

  auto direct = direct_session("dense", 2, weights.string());
  Runtime runtime;
  wc_session_desc desc = model_desc("dense", nullptr, 2);
  desc.config = nullptr;  // from the weights folder
  const std::string path = weights.string();
  desc.weights = path.c_str();
  {
    Session session(runtime.get(), desc);
    step(session.get(), WC_ACTION_DOWN);
    direct->step(Action::kDown);
    EXPECT_EQ(cpu_frame(session.get()), frame_of(*direct));
  }
  // Truncate one shard: the checkpoint is rejected, naming the file.
  std::string shard;
  for (const auto& entry : fs::directory_iterator(weights)) {
    if (entry.path().extension() == ".safetensors") shard = entry.path().string();
  }
  ASSERT_FALSE(shard.empty());
  fs::resize_file(shard, fs::file_size(shard) - 100);
  wc_session broken = WC_NULL_HANDLE;
  EXPECT_EQ(wc_session_create(runtime.get(), &desc, &broken), WC_RESULT_ERROR_BAD_CHECKPOINT);
  EXPECT_NE(last_error().find(fs::path(shard).filename().string()), std::string::npos)
      << last_error();
  EXPECT_EQ(broken, WC_NULL_HANDLE);
}

}  // namespace
}  // namespace wc::plugin_test
