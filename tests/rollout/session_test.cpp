// The Session: determinism, seeding, multi-frame blocks, and saved states that replay
// bit-for-bit (and fail loudly, naming file and field, when bad).
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <torch/autograd.h>

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>

#include "engine/core/safetensors.h"
#include "engine/game/game.h"
#include "engine/model/dit.h"
#include "engine/model/memory_budget.h"
#include "engine/model/weights.h"
#include "engine/rollout/session.h"
#include "engine/rollout/session_state.h"
#include "tests/model/model_test_util.h"

namespace wc::rollout {
namespace {

using ::testing::HasSubstr;
namespace fs = std::filesystem;

std::vector<uint8_t> frame_of(const Session& s) {
  return std::vector<uint8_t>(s.rgba(), s.rgba() + s.width() * s.height() * 4);
}

std::unique_ptr<Session> make_session(int frames_per_block = 1, uint64_t seed = 3,
                                      const std::string& policy = "test_full_history",
                                      SessionOptions options = {}) {
  testing::register_full_history_policy();
  options.seed_frames = frames_per_block;
  return Session::create(testing::tiny_config(frames_per_block), "", policy,
                         nlohmann::json::object(), seed, at::kCPU, options);
}

const std::vector<Action> kScript = {Action::kRight, Action::kRight, Action::kUp,
                                     Action::kNone,  Action::kLeft,  Action::kDown};

std::vector<std::vector<uint8_t>> play(Session& s, const std::vector<Action>& script) {
  std::vector<std::vector<uint8_t>> frames;
  for (Action a : script) {
    s.step(a);
    frames.push_back(frame_of(s));
  }
  return frames;
}

class SessionTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("wc_session_" +
            std::string(::testing::UnitTest::GetInstance()->current_test_info()->name()));
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  std::string path(const std::string& name) const { return (dir_ / name).string(); }
  fs::path dir_;
};

// Note [Memory budget]: a TempCache budget no machine holds, in frames or in entries per head, is
// refused before anything is allocated, as a window is.
TEST(SessionMemory, AHugeTempCacheBudgetIsRefusedAsAWindowIs) {
  const model::ModelConfig config = testing::tiny_config();
  EXPECT_NO_THROW(require_session_memory(config, config.frame, "tempcache", {{"budget_frames", 16}},
                                         at::kCPU, at::kFloat));
  EXPECT_THROW(require_session_memory(config, config.frame, "tempcache",
                                      {{"budget_frames", int64_t{1} << 40}}, at::kCPU, at::kFloat),
               model::OutOfMemory);
  EXPECT_THROW(require_session_memory(config, config.frame, "tempcache",
                                      {{"budget", int64_t{1} << 50}}, at::kCPU, at::kFloat),
               model::OutOfMemory);
  EXPECT_THROW(require_session_memory(config, config.frame, "dense", {{"window", int64_t{1} << 40}},
                                      at::kCPU, at::kFloat),
               model::OutOfMemory);
  // Unbounded ("budget": 0) is counted at the default window: it starts small enough.
  EXPECT_NO_THROW(require_session_memory(config, config.frame, "tempcache", {{"budget", 0}},
                                         at::kCPU, at::kFloat));
}

TEST_F(SessionTest, SeedFrameIsTheReferenceGame) {
  auto s = make_session();
  EXPECT_EQ(s->width(), 16);
  EXPECT_EQ(s->height(), 16);
  EXPECT_EQ(s->frame_index(), 0u);
  game::GameConfig config;
  config.width = 16;
  config.height = 16;
  config.seed = 3;
  game::Game game(config);
  EXPECT_EQ(frame_of(*s), game.frame());
}

TEST_F(SessionTest, DeterministicForSeedAndActions) {
  auto a = make_session(), b = make_session(), other = make_session(1, 4);
  const auto fa = play(*a, kScript), fb = play(*b, kScript), fo = play(*other, kScript);
  EXPECT_EQ(fa, fb);
  EXPECT_NE(fa, fo);
  EXPECT_NE(fa[0], fa[1]);  // frames do change
  EXPECT_EQ(a->frame_index(), kScript.size());
  EXPECT_EQ(a->stats().blocks, static_cast<int64_t>(kScript.size()));
  EXPECT_GT(a->stats().model_ms, 0.0);
}

TEST_F(SessionTest, ResetStartsTheSameRunAgain) {
  auto s = make_session();
  const auto first = play(*s, kScript);
  s->reset(3);
  EXPECT_EQ(s->frame_index(), 0u);
  EXPECT_EQ(play(*s, kScript), first);
}

TEST_F(SessionTest, ActionsSteerTheRollout) {
  auto a = make_session(), b = make_session();
  a->step(Action::kLeft);
  b->step(Action::kRight);
  EXPECT_NE(frame_of(*a), frame_of(*b));
}

TEST_F(SessionTest, MultiFrameBlocksServeOneFramePerStep) {
  auto s = make_session(2);
  s->step(Action::kUp);  // generates a block of 2 frames, shows the first
  const at::Tensor block = s->last_block();
  const auto first = frame_of(*s);
  s->step(Action::kDown);  // shows the second frame of the same block
  EXPECT_TRUE(at::equal(s->last_block(), block));
  EXPECT_NE(frame_of(*s), first);
  s->step(Action::kDown);  // a new block
  EXPECT_FALSE(at::equal(s->last_block(), block));
  EXPECT_EQ(s->frame_index(), 3u);
  s->step_block({Action::kLeft, Action::kRight});
  EXPECT_EQ(s->frame_index(), 6u);
  EXPECT_THAT(testing::error_of([&] { s->step_block({Action::kLeft}); }),
              HasSubstr("one action per frame"));
}

TEST_F(SessionTest, SavedStateReproducesNextFramesBitForBit) {
  for (int f : {1, 2}) {
    auto s = make_session(f);
    play(*s, {kScript.begin(), kScript.begin() + 3});
    s->save_state(path("state.wcs"));
    const auto after = play(*s, kScript);

    auto restored = make_session(f, /*seed=*/99);  // a different run before loading
    play(*restored, {Action::kUp});
    restored->load_state(path("state.wcs"));
    EXPECT_EQ(restored->frame_index(), 3u);
    EXPECT_EQ(play(*restored, kScript), after) << "frames per block " << f;
  }
}

// Note [Previous-frame skip]: the session hands the sampler the last shown frame. A model that
// predicts "nothing changed" (a zero output head) and samples in one step then holds the seed
// frame under every key, and a model with the skip replays a saved state bit for bit (the
// reference is rebuilt along with the blocks).
model::ModelConfig skip_config(int frames_per_block) {
  model::ModelConfig c = testing::tiny_config(frames_per_block);
  c.prediction.previous_frame_skip = true;
  c.prediction.spread = 0.5;
  return c;
}

TEST_F(SessionTest, PreviousFrameSkipWithAZeroHeadHoldsTheSeedFrame) {
  testing::register_full_history_policy();
  model::ModelConfig c = skip_config(1);
  c.sampler.steps = 1;
  model::CausalDiT dit(c);
  model::init_random_weights(dit, 4);
  {
    torch::NoGradGuard no_grad;
    dit->head->proj->weight.zero_();
    dit->head->proj->bias.zero_();
  }
  model::save_weights(dit, path("zero-head"));
  SessionOptions options;
  options.seed_frames = 1;
  auto s = Session::create(c, path("zero-head"), "test_full_history", nlohmann::json::object(), 3,
                           at::kCPU, options);
  const std::vector<uint8_t> seed = frame_of(*s);
  for (const auto& frame : play(*s, kScript)) EXPECT_EQ(frame, seed);
}

TEST_F(SessionTest, PreviousFrameSkipStateReplaysBitForBit) {
  testing::register_full_history_policy();
  SessionOptions options;
  for (int f : {1, 2}) {
    options.seed_frames = f;
    const auto make = [&](uint64_t seed) {
      return Session::create(skip_config(f), "", "test_full_history", nlohmann::json::object(),
                             seed, at::kCPU, options);
    };
    auto s = make(3);
    play(*s, {kScript.begin(), kScript.begin() + 3});
    s->save_state(path("state.wcs"));
    const auto after = play(*s, kScript);
    auto restored = make(99);
    play(*restored, {Action::kUp});
    restored->load_state(path("state.wcs"));
    EXPECT_EQ(play(*restored, kScript), after) << "frames per block " << f;
  }
}

TEST_F(SessionTest, StateOfAFreshSessionRoundTrips) {
  auto s = make_session();
  s->save_state(path("fresh.wcs"));
  const auto expected = play(*s, kScript);
  auto restored = make_session();
  play(*restored, kScript);
  restored->load_state(path("fresh.wcs"));
  EXPECT_EQ(restored->frame_index(), 0u);
  EXPECT_EQ(play(*restored, kScript), expected);
}

TEST_F(SessionTest, BadStateFilesNameFileAndFieldAndLeaveSessionUnchanged) {
  auto s = make_session();
  play(*s, {Action::kUp, Action::kLeft});
  s->save_state(path("good.wcs"));
  std::ifstream in(path("good.wcs"), std::ios::binary);
  const std::vector<uint8_t> good((std::istreambuf_iterator<char>(in)), {});

  auto victim = make_session();
  play(*victim, {Action::kDown});
  const auto before = frame_of(*victim);
  const auto expect_error = [&](const std::string& name, const std::string& part) {
    const std::string error = testing::error_of([&] { victim->load_state(path(name)); });
    EXPECT_THAT(error, HasSubstr(path(name))) << name;
    EXPECT_THAT(error, HasSubstr(part)) << name;
    EXPECT_EQ(frame_of(*victim), before) << name;
    EXPECT_EQ(victim->frame_index(), 1u) << name;
  };

  // Truncated.
  std::ofstream(path("truncated.wcs"), std::ios::binary)
      .write(reinterpret_cast<const char*>(good.data()),
             static_cast<std::streamsize>(good.size() / 2));
  expect_error("truncated.wcs", "");

  // Edited fields, written through the same format.
  const auto rewrite = [&](const std::string& name, auto edit) {
    SafetensorsFile file = SafetensorsFile::from_bytes(good, "good");
    std::vector<TensorView> tensors = file.tensors();
    Metadata metadata = file.metadata();
    std::vector<int64_t> actions(static_cast<size_t>(file.at("actions").numel()));
    std::memcpy(actions.data(), file.at("actions").data, file.at("actions").byte_size);
    edit(metadata, actions);
    for (TensorView& t : tensors) {
      if (t.name == "actions") t.data = reinterpret_cast<const uint8_t*>(actions.data());
    }
    write_safetensors(path(name), tensors, metadata);
  };
  rewrite("format.wcs", [](Metadata& m, auto&) { m["format"] = "something-else"; });
  expect_error("format.wcs", "field 'format'");
  rewrite("seed.wcs", [](Metadata& m, auto&) { m["seed"] = "12x"; });
  expect_error("seed.wcs", "field 'seed'");
  rewrite("missing.wcs", [](Metadata& m, auto&) { m.erase("frame_index"); });
  expect_error("missing.wcs", "field 'frame_index': missing");
  rewrite("unknown.wcs", [](Metadata& m, auto&) { m["colour"] = "red"; });
  expect_error("unknown.wcs", "field 'colour': unknown key");
  rewrite("config.wcs", [](Metadata& m, auto&) { m["config"] = "game-small"; });
  expect_error("config.wcs", "field 'config'");
  rewrite("index.wcs", [](Metadata& m, auto&) { m["frame_index"] = "7"; });
  expect_error("index.wcs", "field 'frame_index'");
  rewrite("policy.wcs", [](Metadata& m, auto&) { m["policy"] = "no-such-policy"; });
  expect_error("policy.wcs", "field 'policy'");
  rewrite("settings.wcs", [](Metadata& m, auto&) { m["policy_settings"] = "{oops"; });
  expect_error("settings.wcs", "field 'policy_settings'");
  rewrite("action.wcs", [](Metadata&, std::vector<int64_t>& a) { a[1] = 9; });
  expect_error("action.wcs", "field 'actions[1]'");
  rewrite("diverged.wcs", [](Metadata&, std::vector<int64_t>& a) { a[1] = 2; });
  expect_error("diverged.wcs", "field 'block_hashes[1]'");
}

// The saved states of the hostile corpus (tests/data/hostile/states, listed in expect.tsv with the
// words each refusal must say): each is refused naming the file and the field, and the session
// that was asked to load it plays on as before.
TEST_F(SessionTest, HostileStateCorpusIsRefusedByFileAndField) {
  const fs::path corpus = fs::path(WORLDCAST_SOURCE_DIR) / "tests" / "data" / "hostile";
  std::map<std::string, std::string> expected;  // file name -> words
  std::ifstream manifest(corpus / "expect.tsv");
  ASSERT_TRUE(manifest) << corpus / "expect.tsv";
  for (std::string line; std::getline(manifest, line);) {
    const size_t a = line.find('\t'), b = line.find('\t', a + 1);
    if (line.rfind("state\t", 0) != 0 || b == std::string::npos) continue;
    expected[line.substr(a + 1, b - a - 1)] = line.substr(b + 1);
  }
  size_t files = 0;
  for (const auto& entry : fs::directory_iterator(corpus / "states")) {
    ++files;
    EXPECT_TRUE(expected.count("states/" + entry.path().filename().string())) << entry.path();
  }
  EXPECT_EQ(files, expected.size());
  EXPECT_GE(files, 20u);

  auto victim = make_session();
  play(*victim, {Action::kDown});
  const auto before = frame_of(*victim);
  for (const auto& [name, words] : expected) {
    const std::string file = (corpus / name).string();
    const std::string error = testing::error_of([&] { victim->load_state(file); });
    EXPECT_THAT(error, HasSubstr(file)) << name;
    EXPECT_THAT(error, HasSubstr(words)) << name;
    EXPECT_EQ(frame_of(*victim), before) << name;
    EXPECT_EQ(victim->frame_index(), 1u) << name;
  }
  // Still playing, as a fresh session on the same keys does.
  auto fresh = make_session();
  play(*fresh, {Action::kDown});
  EXPECT_EQ(play(*victim, kScript), play(*fresh, kScript));
}

TEST_F(SessionTest, PixelSpaceOnlyAndSeedFramesWholeBlocks) {
  testing::register_full_history_policy();
  model::ModelConfig latent = testing::tiny_config();
  latent.channels = 16;
  EXPECT_THAT(testing::error_of([&] {
                Session::create(latent, "", "test_full_history", nlohmann::json::object(), 0,
                                at::kCPU);
              }),
              HasSubstr("channels"));
  SessionOptions options;
  options.seed_frames = 1;
  EXPECT_THAT(testing::error_of([&] {
                Session::create(testing::tiny_config(2), "", "test_full_history",
                                nlohmann::json::object(), 0, at::kCPU, options);
              }),
              HasSubstr("seed_frames"));
  EXPECT_THAT(testing::error_of([&] {
                Session::create(testing::tiny_config(), "", "nope", nlohmann::json::object(), 0,
                                at::kCPU);
              }),
              HasSubstr("unknown policy 'nope'"));
}

TEST_F(SessionTest, NamedResolutionAndNoSeedFrames) {
  testing::register_full_history_policy();
  SessionOptions options;
  options.resolution = "wide";
  options.seed_frames = 0;
  auto s = Session::create(testing::tiny_config(), "", "test_full_history",
                           nlohmann::json::object(), 0, at::kCPU, options);
  EXPECT_EQ(s->width(), 32);
  EXPECT_EQ(s->height(), 16);
  s->step(Action::kNone);
  EXPECT_EQ(s->frame_index(), 1u);
}

TEST_F(SessionTest, DensePolicySessionMatchesFullHistory) {
  testing::register_full_history_policy();
  const auto names = attention::policy_names();
  if (std::find(names.begin(), names.end(), "dense") == names.end()) {
    GTEST_SKIP() << "the dense policy is not registered in this build";
  }
  SessionOptions options;
  auto dense =
      Session::create(testing::tiny_config(), "", "dense", {{"window", 0}}, 5, at::kCPU, options);
  auto full = make_session(1, 5);
  const auto a = play(*dense, kScript), b = play(*full, kScript);
  // Same math, possibly a different kernel: frames agree up to a quantisation step.
  for (size_t i = 0; i < a.size(); ++i) {
    int worst = 0;
    for (size_t j = 0; j < a[i].size(); ++j) worst = std::max(worst, std::abs(a[i][j] - b[i][j]));
    EXPECT_LE(worst, 1) << "frame " << i;
  }
  EXPECT_GT(dense->stats().policy.total_tokens(), 0);
}

}  // namespace
}  // namespace wc::rollout
