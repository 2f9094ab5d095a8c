// Note [Tile tokens]: a tile model trains on the game's ground windows, exports with its tile
// book, and plays whole tiles; its config refuses what only a patch model trains with.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <vector>

#include "engine/core/error.h"
#include "engine/model/model_config.h"
#include "engine/model/tile_tokenizer.h"
#include "engine/rollout/session.h"
#include "engine/train/tile_survey.h"
#include "engine/train/train_config.h"
#include "engine/train/trainer.h"

namespace wc::train {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;

// The smallest frame whose overlay row holds the phase and the game's five layers (6 places).
constexpr int kSide = 80;

class TileTrainerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("wc_tile_trainer_" + std::to_string(::getpid()));
    fs::remove_all(dir_);
    fs::create_directories(dir_);
    book_ = survey_tile_book(kSide, kSide, 4, 1);
    model::write_tile_book((dir_ / "tilebook.txt").string(), book_);
    nlohmann::json model = {{"name", "tiny-tiles"},
                            {"channels", 3},
                            {"frame", {{"height", kSide}, {"width", kSide}}},
                            {"resolutions", nlohmann::json::object()},
                            {"video_frames_per_frame", 1},
                            {"autoencoder", nullptr},
                            {"patch", {1, 16, 16}},
                            {"frames_per_block", 1},
                            {"hidden", 32},
                            {"layers", 2},
                            {"heads", 2},
                            {"head_dim", 16},
                            {"mlp", 64},
                            {"num_actions", 6},
                            {"freq_dim", 32},
                            {"norm_eps", 1e-6},
                            {"rope_theta", 10000.0},
                            {"sampler", {{"steps", 1}, {"shift", 1.0}, {"context_noise", 0.0}}},
                            {"tokens",
                             {{"codebook", "tilebook.txt"},
                              {"vocab", book_.vocab()},
                              {"passes", 2},
                              {"first_quarter", {1, 1}}}}};
    std::ofstream(dir_ / "model.json") << model.dump(2);
    config_.file = (dir_ / "run.json").string();
    config_.model_config = (dir_ / "model.json").string();
    config_.batch = 4;
    config_.clips.frames = 5;
    config_.clips.width = kSide;
    config_.clips.height = kSide;
    config_.clips.max_walk = 20;
    config_.has_tokens = true;
    config_.tokens.noisy_frames = 2;
    config_.tokens.overlay_weight = 2.0;
    config_.tokens.overlay_corrupt_share = 0.5;
    config_.learning_rate = 3e-3;
    config_.warmup_steps = 2;
    config_.data_workers = 2;
    config_.log_every = 5;
    config_.state_dtype = "f32";
    config_.checkpoint_minutes = 1000;
  }
  void TearDown() override { fs::remove_all(dir_); }
  fs::path dir_;
  model::TileBook book_;
  TrainConfig config_;
};

TEST_F(TileTrainerTest, LearnsAndExportsAModelThatPlaysWholeTiles) {
  TrainOptions options;
  options.out_dir = (dir_ / "run").string();
  options.max_steps = 30;
  options.progress_bar = false;
  std::vector<double> losses;
  const TrainReport report =
      train(config_, options, [&](const StepReport& r) { losses.push_back(r.loss); });
  EXPECT_EQ(report.steps, 30);
  ASSERT_GE(losses.size(), 2u);
  EXPECT_LT(losses.back(), losses.front());
  // The exported folder carries its tile book and plays.
  EXPECT_TRUE(fs::exists(dir_ / "run" / "model" / "tilebook.txt"));
  const model::ModelConfig exported =
      model::load_model_config((dir_ / "run" / "model" / "config.json").string());
  ASSERT_TRUE(exported.tokens.tiles());
  EXPECT_EQ(exported.tokens.first_quarter, (std::vector<int>{1, 1}));
  auto session = rollout::Session::create(exported, (dir_ / "run" / "model").string(), "dense",
                                          {{"window", 4}}, 3, at::kCPU);
  const model::TileTokenizer tokenizer(*exported.tokens.tile_book, at::kCPU);
  for (int i = 0; i < 4; ++i) {
    session->step(i < 2 ? game::Action::kRight : game::Action::kDown);
    // Every frame it draws is its book's drawing of some tokens: re-encoded at the phase its
    // tokens showed, it decodes to itself.
    const at::Tensor frame = session->last_block().view({1, 1, 3, kSide, kSide});
    const at::Tensor tokens = tokenizer.encode(frame, at::Tensor());
    at::Tensor misses;
    tokenizer.encode(frame, tokenizer.quarters(tokens), &misses);
    EXPECT_EQ(misses.item<int64_t>(), 0) << "frame " << i;
  }
}

TEST_F(TileTrainerTest, RefusesWhatOnlyAPatchModelTrainsWith) {
  config_.tokens.drawn_share = 0.5;
  TrainOptions options;
  options.out_dir = (dir_ / "run").string();
  options.max_steps = 1;
  options.progress_bar = false;
  try {
    train(config_, options);
    FAIL() << "expected an error";
  } catch (const Error& error) {
    EXPECT_THAT(error.what(), HasSubstr("tokens.drawn_share"));
    EXPECT_THAT(error.what(), HasSubstr("tile model"));
  }
}

TEST_F(TileTrainerTest, AConfigWhoseBookDoesNotFitIsRefusedNamingTheField) {
  nlohmann::json model = nlohmann::json::parse(std::ifstream(dir_ / "model.json"));
  const auto refused = [&](nlohmann::json changed, const std::string& what) {
    std::ofstream(dir_ / "bad.json") << changed.dump(2);
    try {
      model::load_model_config((dir_ / "bad.json").string());
      ADD_FAILURE() << "accepted: " << what;
    } catch (const Error& error) {
      EXPECT_THAT(error.what(), HasSubstr(what));
    }
  };
  nlohmann::json vocab = model;
  vocab["tokens"]["vocab"] = book_.vocab() + 1;
  refused(vocab, "tokens.vocab");
  nlohmann::json patch = model;
  patch["patch"] = {1, 8, 8};
  refused(patch, "8");
  nlohmann::json frame = model;
  frame["frame"] = {{"height", 96}, {"width", 96}};
  refused(frame, "80x80");
  nlohmann::json quarter = model;
  quarter["tokens"].erase("first_quarter");
  refused(quarter, "first_quarter");
  nlohmann::json passes = model;
  passes["tokens"]["tile_passes"] = true;
  refused(passes, "tokens.tile_passes");
}

}  // namespace
}  // namespace wc::train
