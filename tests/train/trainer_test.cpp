// The training loop on a tiny model: it learns, a resumed run equals an uninterrupted one, the
// exported model loads, and a damaged state is refused by name.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "engine/core/error.h"
#include "engine/core/safetensors_torch.h"
#include "engine/model/dit.h"
#include "engine/model/model_config.h"
#include "engine/model/weights.h"
#include "engine/train/train_config.h"
#include "engine/train/trainer.h"

namespace wc::train {
namespace {

namespace fs = std::filesystem;

class TrainerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("wc_trainer_" + std::to_string(::getpid()) + "_" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
    nlohmann::json model = {{"name", "tiny-game"},
                            {"channels", 3},
                            {"frame", {{"height", 16}, {"width", 16}}},
                            {"resolutions", nlohmann::json::object()},
                            {"video_frames_per_frame", 1},
                            {"autoencoder", nullptr},
                            {"patch", {1, 4, 4}},
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
                            {"sampler", {{"steps", 2}, {"shift", 1.0}, {"context_noise", 0.0}}}};
    std::ofstream(dir_ / "model.json") << model.dump(2);
    config_.file = (dir_ / "run.json").string();
    config_.model_config = (dir_ / "model.json").string();
    config_.batch = 8;
    config_.clips.frames = 4;
    config_.clips.width = 16;
    config_.clips.height = 16;
    config_.clips.max_walk = 20;
    config_.learning_rate = 3e-3;
    config_.warmup_steps = 5;
    config_.data_workers = 2;
    config_.log_every = 5;
    config_.state_dtype = "f32";
    config_.checkpoint_minutes = 1000;
  }
  void TearDown() override { fs::remove_all(dir_); }

  TrainReport run(const std::string& name, int64_t max_steps,
                  std::vector<double>* losses = nullptr) {
    TrainOptions options;
    options.out_dir = (dir_ / name).string();
    options.max_steps = max_steps;
    options.progress_bar = false;
    return train(config_, options, [&](const StepReport& r) {
      if (losses) losses->push_back(r.loss);
    });
  }

  // At least `min_logs` logged losses, the last below 80% of the first: the run learned.
  static void expect_learns(const std::vector<double>& losses, size_t min_logs) {
    ASSERT_GE(losses.size(), min_logs);
    EXPECT_LT(losses.back(), 0.8 * losses.front())
        << "first " << losses.front() << " last " << losses.back();
  }

  // A run stopped after `first` steps and resumed to `total` ends in exactly the state of one
  // uninterrupted run (runs "<tag>_straight" and "<tag>_resumed").
  void expect_resume_equals_straight(const std::string& tag, int64_t first, int64_t total) {
    run(tag + "_straight", total);
    run(tag + "_resumed", first);
    EXPECT_EQ(run(tag + "_resumed", total).first_step, first);
    const auto state = [&](const std::string& name) {
      return load_tensors(Checkpoint::open((dir_ / (tag + name) / "state").string()));
    };
    const TensorMap a = state("_straight"), b = state("_resumed");
    ASSERT_EQ(a.size(), b.size());
    for (const auto& [name, tensor] : a) EXPECT_TRUE(tensor.equal(b.at(name))) << name;
  }

  fs::path dir_;
  TrainConfig config_;
};

TEST_F(TrainerTest, LossFallsAsItLearnsTheGame) {
  std::vector<double> losses;
  const TrainReport r = run("learn", 80, &losses);
  EXPECT_EQ(r.steps, 80);
  ASSERT_NO_FATAL_FAILURE(expect_learns(losses, 10u));
}

TEST_F(TrainerTest, ResumedRunEqualsUninterruptedRun) {
  expect_resume_equals_straight("plain", 3, 6);
}

TEST_F(TrainerTest, ExportedModelLoadsForPlay) {
  run("export", 2);
  const fs::path model_dir = dir_ / "export" / "model";
  ASSERT_TRUE(fs::exists(model_dir / "config.json"));
  const model::ModelConfig config = model::load_model_config((model_dir / "config.json").string());
  model::CausalDiT model(config);
  model::load_weights(model, model_dir.string());
  EXPECT_FALSE(fs::exists(dir_ / "export" / "model.tmp"));
  EXPECT_FALSE(fs::exists(dir_ / "export" / "state.tmp"));
}

TEST_F(TrainerTest, InitFromAnExportedModelStartsThere) {
  run("first", 20);
  TrainOptions options;
  options.out_dir = (dir_ / "second").string();
  options.max_steps = 1;
  options.progress_bar = false;
  options.init_from = (dir_ / "first" / "model").string();
  const TrainReport r = train(config_, options);
  EXPECT_EQ(r.first_step, 0);
  const TensorMap exported = load_tensors(Checkpoint::open((dir_ / "first" / "model").string()));
  const TensorMap state = load_tensors(Checkpoint::open((dir_ / "second" / "state").string()));
  for (const auto& [name, weight] : exported) {
    // One step of EMA (decay 0.999) from the loaded weights stays next to them.
    EXPECT_TRUE(at::allclose(state.at("ema." + name), weight.to(at::kFloat), 1e-3, 1e-3)) << name;
  }
}

// Note [Previous-frame skip]: with a zero output the skip already predicts "nothing changed",
// so its first loss is below the plain velocity's (a zero output there predicts v = 0), on the
// same clips and noise; and it learns from there.
TEST_F(TrainerTest, PreviousFrameSkipStartsLowerAndLearns) {
  std::vector<double> plain, skip;
  run("plain", 5, &plain);
  nlohmann::json model = nlohmann::json::parse(std::ifstream(config_.model_config));
  model["prediction"] = {{"reference", "previous_frame"}, {"spread", 0.5}};
  std::ofstream(config_.model_config) << model.dump(2);
  run("skip", 60, &skip);
  ASSERT_FALSE(plain.empty());
  ASSERT_GE(skip.size(), 10u);
  EXPECT_LT(skip.front(), 0.8 * plain.front())
      << "skip " << skip.front() << " plain " << plain.front();
  EXPECT_LT(skip.back(), 0.9 * skip.front()) << "first " << skip.front() << " last " << skip.back();
}

// Note [Own context]: clips that see the model's own predictions as history give another loss
// from the first step (the history differs), and the model still learns; a resumed run repeats
// the same steps (the choice of clips follows the step's seed).
TEST_F(TrainerTest, OwnContextTrainsAndResumesExactly) {
  std::vector<double> plain, own;
  run("plain", 5, &plain);
  config_.noise.own_context_share = 1.0;
  run("own", 60, &own);
  ASSERT_FALSE(plain.empty());
  ASSERT_NO_FATAL_FAILURE(expect_learns(own, 10u));
  EXPECT_NE(own.front(), plain.front());
  config_.noise.own_context_share = 0.5;
  expect_resume_equals_straight("own", 3, 6);
}

// --init with a new head keeps every trained tensor but the output projection, which starts at
// zero (a config whose output changed meaning); without --init it is refused.
TEST_F(TrainerTest, InitWithANewHeadZeroesOnlyTheOutputProjection) {
  run("first", 20);
  TrainOptions options;
  options.out_dir = (dir_ / "second").string();
  options.max_steps = 1;
  options.progress_bar = false;
  options.init_new_head = true;
  EXPECT_THROW(train(config_, options), Error);
  options.init_from = (dir_ / "first" / "model").string();
  train(config_, options);
  const TensorMap exported = load_tensors(Checkpoint::open((dir_ / "first" / "model").string()));
  const TensorMap state = load_tensors(Checkpoint::open((dir_ / "second" / "state").string()));
  for (const auto& [name, weight] : exported) {
    const at::Tensor ema = state.at("ema." + name);
    if (name.rfind("head.proj.", 0) == 0) {
      // It was trained (the EMA of 20 steps from zero), and now restarts from zero: one step of
      // EMA later it is a small fraction of what it was.
      const double trained = weight.abs().max().item<double>();
      EXPECT_GT(trained, 0.0) << name;
      EXPECT_LT(ema.abs().max().item<double>(), 0.05 * trained) << name;
    } else {
      EXPECT_TRUE(at::allclose(ema, weight.to(at::kFloat), 1e-3, 1e-3)) << name;
    }
  }
}

// A new head keeps the trained layers: a model that differs beyond the output head is refused,
// naming the first tensor that differs.
TEST_F(TrainerTest, ANewHeadNeedsTheSameLayers) {
  run("first", 5);
  nlohmann::json model = nlohmann::json::parse(std::ifstream(config_.model_config));
  model["hidden"] = 64;
  model["head_dim"] = 32;
  std::ofstream(dir_ / "wider.json") << model.dump(2);
  config_.model_config = (dir_ / "wider.json").string();
  TrainOptions options;
  options.out_dir = (dir_ / "wider").string();
  options.max_steps = 1;
  options.progress_bar = false;
  options.init_new_head = true;
  options.init_from = (dir_ / "first" / "model").string();
  try {
    train(config_, options);
    FAIL() << "a model that differs beyond the head must not start from these weights";
  } catch (const Error& e) {
    EXPECT_THAT(e.what(), testing::HasSubstr("config.json: tensor 'patch_embed.weight'"));
    EXPECT_THAT(e.what(), testing::HasSubstr("only the output head may be new"));
  }
}

TEST_F(TrainerTest, DamagedStateIsRefusedByName) {
  run("damaged", 2);
  fs::path shard;
  for (const auto& entry : fs::directory_iterator(dir_ / "damaged" / "state")) {
    if (entry.path().extension() == ".safetensors") shard = entry.path();
  }
  ASSERT_FALSE(shard.empty());
  fs::resize_file(shard, fs::file_size(shard) / 2);
  try {
    run("damaged", 4);
    FAIL() << "a truncated state must not resume";
  } catch (const Error& error) {
    EXPECT_THAT(error.what(), ::testing::HasSubstr(shard.filename().string()));
  }
}

TEST_F(TrainerTest, InconsistentConfigIsRefused) {
  config_.clips.width = 32;
  EXPECT_THROW(run("bad", 1), Error);
  config_.clips.width = 16;
  config_.noise.dropped_action = 6;
  EXPECT_THROW(run("bad", 1), Error);
}

}  // namespace
}  // namespace wc::train
