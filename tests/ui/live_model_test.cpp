// The world model on the inference thread (real Session, real LibTorch, real Vulkan on
// lavapipe): a threshold change takes effect within one block, a policy switch keeps the game,
// and a recording replays headless with --actions to the same frames; plus the model source
// built from a weights folder as `worldcast play --source model --weights DIR` does.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#define STB_IMAGE_IMPLEMENTATION
#define STB_IMAGE_STATIC
#include <stb/stb_image.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <thread>

#include "engine/core/atomic_file.h"
#include "engine/game/action_script.h"
#include "engine/model/dit.h"
#include "engine/model/play_settings.h"
#include "engine/model/weights.h"
#include "engine/rollout/game_source.h"
#include "engine/rollout/session.h"
#include "tests/model/model_test_util.h"
#include "ui/frames/headless_renderer.h"
#include "ui/frames/headless_runner.h"
#include "ui/inference/inference_thread.h"
#include "ui/inference/model_source.h"
#include "ui/inference/session_recorder.h"
#include "ui/vulkan/context.h"

namespace wc::ui {
namespace {

namespace fs = std::filesystem;
using rollout::Session;
using ::testing::HasSubstr;
constexpr double kWait = 300.0;  // seconds: a loaded 2-core machine

std::vector<uint8_t> read_png(const fs::path& path) {
  int w = 0, h = 0, n = 0;
  stbi_uc* data = stbi_load(path.string().c_str(), &w, &h, &n, 4);
  if (!data) throw std::runtime_error("cannot read " + path.string());
  std::vector<uint8_t> pixels(data, data + static_cast<size_t>(w) * h * 4);
  stbi_image_free(data);
  return pixels;
}

std::vector<uint8_t> frame_of(const FrameSource& s) {
  return std::vector<uint8_t>(s.rgba(), s.rgba() + s.width() * s.height() * 4);
}

std::unique_ptr<Session> tiny_session(const std::string& policy, const nlohmann::json& settings,
                                      uint64_t seed = 11) {
  return Session::create(wc::testing::tiny_config(), "", policy, settings, seed, at::kCPU);
}

class LiveModel : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ =
        fs::temp_directory_path() /
        ("wc_live_" + std::string(::testing::UnitTest::GetInstance()->current_test_info()->name()));
    fs::remove_all(dir_);
    fs::create_directories(dir_);
    vk::ContextOptions options;
    options.validation = true;
    context_ = std::make_unique<vk::Context>(options);
  }
  void TearDown() override {
    EXPECT_EQ(context_->validation_errors(), 0u);
    fs::remove_all(dir_);
  }
  // Unpaced play from seed 11 whose recordings name the `worldcast play` command.
  static InferenceOptions recorded_play_options() {
    InferenceOptions options;
    options.paced = false;
    options.seed = 11;
    options.record_meta = {{"command", "worldcast play --source model"}};
    return options;
  }
  // The stats once the plain tiny pixel model has rejected `command` and played on; the game
  // must not have failed.
  std::shared_ptr<const LiveStats> rejected_by_a_plain_model(const InferenceCommand& command) {
    auto plain = tiny_session("dense", {{"window", 3}});
    SessionControl control(*plain);
    HeadlessRenderer renderer(*context_, 16, 16, 16, 16);
    InferenceOptions options;
    options.paced = false;
    InferenceThread inference(*plain, renderer.sink(), &control, options);
    inference.start();
    inference.send(command);
    EXPECT_TRUE(inference.wait_for(
        [](const LiveStats& s) { return !s.error.empty() && s.frames_produced >= 2; }, kWait));
    std::shared_ptr<const LiveStats> stats = inference.stats();
    inference.stop();
    EXPECT_FALSE(stats->failed);
    return stats;
  }
  fs::path dir_;
  std::unique_ptr<vk::Context> context_;
};

TEST_F(LiveModel, ThresholdChangeTakesEffectWithinOneBlock) {
  const nlohmann::json settings = {{"window", 3}};
  auto session = tiny_session("headcast", settings);
  SessionControl control(*session);
  HeadlessRenderer renderer(*context_, 16, 16, 16, 16);
  InferenceOptions options;
  options.paced = false;
  options.seed = 11;
  InferenceThread inference(*session, renderer.sink(), &control, options);
  const fs::path record = dir_ / "rec";
  inference.send(InferenceCommand::start_recording(record.string()));
  inference.start();
  ASSERT_TRUE(inference.wait_for(
      [](const LiveStats& s) { return s.run.policy.classified && s.frames_produced >= 4; }, kWait));
  const uint64_t sent_at = inference.stats()->frame_index;
  // theta_dummy = -1: every cast head's S_dummy passes, so every head becomes Dummy.
  inference.send(InferenceCommand::configure({{"theta_dummy", -1.0}}));
  ASSERT_TRUE(
      inference.wait_for([](const LiveStats& s) { return s.commands_applied >= 2; }, kWait));
  const uint64_t applied_at = inference.stats()->command_frame;
  EXPECT_LE(applied_at, sent_at + 1) << "more than the block in flight ran before the change";
  ASSERT_TRUE(inference.wait_for(
      [&](const LiveStats& s) { return s.frame_index >= applied_at + 2; }, kWait));
  inference.send(InferenceCommand::stop_recording());
  ASSERT_TRUE(inference.wait_for([](const LiveStats& s) { return !s.recording; }, kWait));
  const std::shared_ptr<const LiveStats> stats = inference.stats();
  inference.stop();
  for (const auto& layer : stats->run.policy.heads) {
    for (const auto& head : layer) EXPECT_EQ(head.type, attention::HeadType::kDummy);
  }
  EXPECT_DOUBLE_EQ(stats->settings["theta_dummy"].get<double>(), -1.0);

  // The very next block already ran under the new cast: the same rollout done by hand, with the
  // change applied after frame `applied_at`, gives the recorded frame applied_at + 1; without
  // the change it would differ.
  auto with = tiny_session("headcast", settings);
  auto without = tiny_session("headcast", settings);
  for (uint64_t f = 0; f < applied_at; ++f) {
    with->step(Action::kNone);
    without->step(Action::kNone);
  }
  with->configure_policy({{"theta_dummy", -1.0}});
  with->step(Action::kNone);
  without->step(Action::kNone);
  const std::vector<uint8_t> recorded = read_png(record / recorded_frame_name(applied_at + 1));
  EXPECT_EQ(recorded, frame_of(*with));
  EXPECT_NE(recorded, frame_of(*without));
}

TEST_F(LiveModel, PolicySwitchOnTheThreadKeepsTheGame) {
  auto session = tiny_session("headcast", {{"window", 3}});
  SessionControl control(*session);
  HeadlessRenderer renderer(*context_, 16, 16, 16, 16);
  InferenceOptions options;
  options.paced = false;
  InferenceThread inference(*session, renderer.sink(), &control, options);
  inference.start();
  ASSERT_TRUE(inference.wait_for([](const LiveStats& s) { return s.frame_index >= 3; }, kWait));
  inference.send(InferenceCommand::switch_policy("dense", {{"window", 5}}));
  ASSERT_TRUE(inference.wait_for([](const LiveStats& s) { return s.policy == "dense"; }, kWait));
  const uint64_t switched_at = inference.stats()->command_frame;
  EXPECT_GE(switched_at, 3u);  // not a reset
  EXPECT_GT(inference.stats()->run.context_blocks, 1);
  EXPECT_EQ(inference.stats()->settings["window"], 5);
  inference.send(InferenceCommand::switch_policy("no_such_policy", {}));
  ASSERT_TRUE(inference.wait_for(
      [&](const LiveStats& s) { return !s.error.empty() && s.frame_index >= switched_at + 2; },
      kWait));
  const auto stats = inference.stats();
  inference.stop();
  EXPECT_THAT(stats->error, HasSubstr("unknown policy 'no_such_policy'"));
  EXPECT_EQ(stats->policy, "dense");
  EXPECT_EQ(stats->policy_names.size(), attention::policy_names().size());
}

// Note [Play settings]: the command reaches a token model, the recording starts with the
// settings in its replay command and notes the change; a bad key is refused and the game plays
// on; a pixel model rejects every key and plays on.
TEST_F(LiveModel, PlaySettingsCommandReachesTheSession) {
  model::ModelConfig config = wc::testing::tiny_token_config();
  config.tokens.temperature = 0.5;
  config.tokens.sure = 0.5;
  auto session = Session::create(config, "", "dense", {{"window", 3}}, 11, at::kCPU);
  SessionControl control(*session);
  ASSERT_EQ(control.geometry().play.size(), model::play_settings().size());
  HeadlessRenderer renderer(*context_, 16, 16, 16, 16);
  InferenceThread inference(*session, renderer.sink(), &control, recorded_play_options());
  const fs::path record = dir_ / "rec";
  inference.send(InferenceCommand::start_recording(record.string()));
  inference.start();
  ASSERT_TRUE(inference.wait_for([](const LiveStats& s) { return s.frames_produced >= 2; }, kWait));
  const nlohmann::json started = inference.stats()->run.play;
  EXPECT_EQ(started.at("temperature"), 0.5);
  EXPECT_EQ(started.at("sure"), 0.5);
  inference.send(InferenceCommand::configure_play({{"temperature", 0.125}, {"passes", 2}}));
  ASSERT_TRUE(inference.wait_for(
      [](const LiveStats& s) { return s.run.play.value("temperature", 0.0) == 0.125; }, kWait));
  inference.send(InferenceCommand::configure_play({{"passes", 99}}));
  ASSERT_TRUE(inference.wait_for([](const LiveStats& s) { return !s.error.empty(); }, kWait));
  EXPECT_THAT(inference.stats()->error, HasSubstr("'passes': must be in"));
  inference.send(InferenceCommand::stop_recording());
  ASSERT_TRUE(inference.wait_for([](const LiveStats& s) { return !s.recording; }, kWait));
  const std::shared_ptr<const LiveStats> stats = inference.stats();
  inference.stop();
  EXPECT_FALSE(stats->failed);
  EXPECT_EQ(session->play_settings().at("temperature"), 0.125);
  EXPECT_EQ(session->play_settings().at("passes"), 2);
  std::ifstream record_json(record / "record.json");
  const nlohmann::json meta = nlohmann::json::parse(record_json);
  EXPECT_EQ(meta["play_settings"], started);
  const std::string replay = meta["replay_command"].get<std::string>();
  EXPECT_THAT(replay, HasSubstr("--play-settings '" + started.dump() + "'"));
  EXPECT_EQ(meta["replayable"], false);
  ASSERT_EQ(meta["changes"].size(), 1u);
  EXPECT_THAT(meta["changes"][0]["what"].get<std::string>(), HasSubstr("play {"));

  const auto plain =
      rejected_by_a_plain_model(InferenceCommand::configure_play({{"temperature", 0.5}}));
  EXPECT_THAT(plain->error, HasSubstr("the model draws no tokens"));
  EXPECT_EQ(plain->run.play, nlohmann::json::object());
}

// A source without a policy (the game) rejects a model's command and plays on.
TEST_F(LiveModel, ACommandToASourceWithoutAPolicyIsRejected) {
  InferenceOptions options;
  options.paced = false;
  auto game = make_game_source(16, 16, 4);
  HeadlessRenderer game_renderer(*context_, 16, 16, 16, 16);
  InferenceThread game_inference(*game, game_renderer.sink(), nullptr, options);
  game_inference.start();
  game_inference.send(InferenceCommand::configure_play({{"passes", 2}}));
  ASSERT_TRUE(game_inference.wait_for([](const LiveStats& s) { return !s.error.empty(); }, kWait));
  const std::shared_ptr<const LiveStats> stats = game_inference.stats();
  game_inference.stop();
  EXPECT_THAT(stats->error, HasSubstr("this source has no policy"));
  EXPECT_FALSE(stats->failed);
}

// Plays `source` on the inference thread with actions changing under it, records part of it
// mid-game, then replays the recording's actions.txt headless (the --actions path) into fresh
// `replay_source` and expects every recorded PNG again, byte for byte, under the same name.
void record_and_replay(const fs::path& dir, vk::Context& context, FrameSource& source,
                       PolicyControl* control, FrameSource& replay_source, uint64_t seed,
                       uint64_t record_from, uint64_t record_frames) {
  const fs::path record = dir / "rec";
  {
    HeadlessRenderer renderer(context, source.width(), source.height(), source.width(),
                              source.height());
    InferenceOptions options;
    options.paced = false;
    options.seed = seed;
    InferenceThread inference(source, renderer.sink(), control, options);
    inference.start();
    std::atomic<bool> done{false};
    // The "player": keys change on their own thread, not in step with the model, but only
    // after the model has made a frame since the last change, so that however this thread is
    // scheduled (a loaded CI machine), a recording of a few frames sees more than one key.
    std::thread player([&] {
      const Action keys[] = {Action::kRight, Action::kUp, Action::kNone, Action::kLeft};
      uint64_t seen = 0;
      for (int i = 0; !done.load(); ++i) {
        inference.offer_action(keys[(i / 2) % 4]);
        const auto frame = [&] {
          const auto stats = inference.stats();  // null until the thread's first snapshot
          return stats ? stats->frame_index : 0;
        };
        while (!done.load() && frame() <= seen) {
          std::this_thread::sleep_for(std::chrono::milliseconds(1));
        }
        seen = frame();
      }
    });
    EXPECT_TRUE(inference.wait_for([&](const LiveStats& s) { return s.frame_index >= record_from; },
                                   kWait));
    inference.send(InferenceCommand::start_recording(record.string()));
    EXPECT_TRUE(inference.wait_for(
        [&](const LiveStats& s) { return s.recorded_frames >= record_frames; }, kWait));
    inference.send(InferenceCommand::stop_recording());
    EXPECT_TRUE(inference.wait_for([](const LiveStats& s) { return !s.recording; }, kWait));
    done.store(true);
    player.join();
    inference.stop();
  }
  const std::vector<Action> actions = game::load_action_script((record / "actions.txt").string());
  std::ifstream record_json(record / "record.json");
  const nlohmann::json meta = nlohmann::json::parse(record_json);
  EXPECT_EQ(meta["replayable"], true);
  EXPECT_EQ(meta["actions"], actions.size());
  EXPECT_GE(meta["frames_recorded"].get<uint64_t>(), record_frames);
  size_t distinct = 0;
  for (Action a : {Action::kRight, Action::kUp, Action::kNone, Action::kLeft}) {
    distinct += std::count(actions.begin(), actions.end(), a) > 0;
  }
  EXPECT_GE(distinct, 2u) << "the player's keys did not reach the source";

  HeadlessOptions headless;
  headless.frames = static_cast<int>(actions.size());
  headless.out_dir = (dir / "replay").string();
  headless.actions = actions;
  headless.seed = seed;
  headless.validate = true;
  const HeadlessReport report = run_headless(headless, replay_source);
  EXPECT_EQ(report.validation_errors, 0u);
  size_t compared = 0;
  for (const auto& entry : fs::directory_iterator(record)) {
    if (entry.path().extension() != ".png") continue;
    const fs::path replayed = dir / "replay" / entry.path().filename();
    ASSERT_TRUE(fs::exists(replayed)) << replayed;
    EXPECT_EQ(read_png(entry.path()), read_png(replayed)) << entry.path().filename();
    ++compared;
  }
  EXPECT_EQ(compared, meta["frames_recorded"].get<size_t>());
  EXPECT_NE(meta["first_file"], recorded_frame_name(1)) << "the recording started mid-game";
}

TEST_F(LiveModel, RecordedModelSessionReplaysHeadlessToTheSameFrames) {
  auto session = tiny_session("headcast", {{"window", 3}}, 21);
  SessionControl control(*session);
  auto replay = tiny_session("headcast", {{"window", 3}}, 21);
  record_and_replay(dir_, *context_, *session, &control, *replay, 21, 2, 16);
}

TEST_F(LiveModel, RecordedGameSessionReplaysHeadlessToTheSameFrames) {
  auto game = make_game_source(64, 48, 4);
  auto replay = make_game_source(64, 48, 4);
  record_and_replay(dir_, *context_, *game, nullptr, *replay, 4, 10, 40);
}

TEST_F(LiveModel, ModelSourceFromAWeightsFolder) {
  const model::ModelConfig config = wc::testing::tiny_config();
  model::CausalDiT dit(config);
  model::init_random_weights(dit, 5);
  const fs::path weights = dir_ / "weights";
  model::save_weights(dit, weights.string());

  ModelSourceOptions options;
  options.weights = weights.string();  // no config.json: the checkpoint's metadata has it
  options.policy = "dense";
  options.device = "cpu";
  ModelSource from_metadata = make_model_source(options);
  EXPECT_THAT(from_metadata.config_file, HasSubstr("checkpoint metadata"));
  EXPECT_EQ(from_metadata.session->width(), 16);

  write_file_atomically((weights / "config.json").string(),
                        model::model_config_to_json(config).dump());
  ModelSource beside = make_model_source(options);
  EXPECT_EQ(beside.config_file, (weights / "config.json").string());
  from_metadata.session->step(Action::kRight);
  beside.session->step(Action::kRight);
  EXPECT_EQ(frame_of(*from_metadata.session), frame_of(*beside.session));
  SessionControl control(*beside.session);
  EXPECT_EQ(control.geometry().grid_h, 4);
  EXPECT_EQ(control.geometry().type_names.at(1), "sink");

  options.weights = (dir_ / "missing").string();
  EXPECT_THAT(wc::testing::error_of([&] { make_model_source(options); }), HasSubstr("missing"));
  options.weights = weights.string();
  options.policy_settings = {{"window", "wide"}};
  EXPECT_THAT(wc::testing::error_of([&] { make_model_source(options); }), HasSubstr("window"));
}

}  // namespace
}  // namespace wc::ui
