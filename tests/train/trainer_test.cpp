// The training loop on a tiny model: it learns, a resumed run equals an uninterrupted one, the
// exported model loads, and a damaged state is refused by name.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <functional>

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

  // The tiny model with a moved reference of 4 pixels (Note [Moved reference]), written next to
  // the plain one and made the training config's model, it and the clips at `size` x `size`
  // pixels; returns its JSON.
  nlohmann::json use_moved_model(int size = 16) {
    nlohmann::json model = nlohmann::json::parse(std::ifstream(dir_ / "model.json"));
    model["prediction"] = {{"reference", "previous_frame"}, {"spread", 0.5}, {"move_pixels", 4}};
    model["frame"] = {{"height", size}, {"width", size}};
    config_.clips.width = config_.clips.height = size;
    std::ofstream(dir_ / "moved.json") << model.dump(2);
    config_.model_config = (dir_ / "moved.json").string();
    return model;
  }

  // The plain model refuses the config: `field` needs a moved reference.
  void expect_needs_moves(const std::string& field) {
    try {
      run("plain", 1);
      ADD_FAILURE() << field << " needs a moved reference, and the plain model has none";
    } catch (const Error& e) {
      EXPECT_THAT(e.what(), testing::HasSubstr("run.json: field '" + field + "'"));
    }
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

  // Every clip's history played by the model after `change` made to the config gives another
  // loss from the first step than `before` does, learns, and resumes exactly at half the clips
  // (the rollout's noise follows the step's seed).
  void expect_played_history_learns(const std::string& tag, const std::function<void()>& before,
                                    const std::function<void()>& change) {
    std::vector<double> first, played;
    config_.noise.own_context_share = 1.0;
    before();
    run(tag + "_before", 5, &first);
    change();
    run(tag, 40, &played);
    ASSERT_FALSE(first.empty());
    ASSERT_NO_FATAL_FAILURE(expect_learns(played, 8u));
    EXPECT_NE(played.front(), first.front());
    config_.noise.own_context_share = 0.5;
    expect_resume_equals_straight(tag, 2, 4);
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

// The motion-weighted loss (Note [Motion-weighted loss]) trains too: it changes the loss the
// optimiser sees, so the first logged loss differs from the plain run's, and it still falls.
TEST_F(TrainerTest, MotionWeightedLossChangesTheLossAndStillLearns) {
  std::vector<double> plain, weighted;
  run("plain", 5, &plain);
  config_.loss.motion_weight = 4.0;
  run("weighted", 40, &weighted);
  ASSERT_FALSE(plain.empty());
  ASSERT_NO_FATAL_FAILURE(expect_learns(weighted, 8u));
  EXPECT_NE(weighted.front(), plain.front());
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

// Note [Own rollout]: against one-step predictions as history.
TEST_F(TrainerTest, OwnRolloutTrainsAndResumesExactly) {
  expect_played_history_learns(
      "rollout", [] {}, [&] { config_.noise.own_context_rollout = true; });
}

// Note [Deep rollout]: a lead makes the rollout play further before the run.
TEST_F(TrainerTest, DeepRolloutTrainsAndResumesExactly) {
  expect_played_history_learns(
      "deep", [&] { config_.noise.own_context_rollout = true; },
      [&] { config_.clips.lead_frames = 6; });
}

// Note [Consistent target]: own clips reaching for their own frames moved as the game moved train
// and resume exactly; the target needs a moved reference and own-history clips, or is refused.
TEST_F(TrainerTest, ConsistentTargetTrainsAndNeedsMovesAndOwnHistory) {
  config_.loss.consistent_target = true;
  expect_needs_moves("loss.own_target");
  use_moved_model();
  // At 16x16 the sprite alone covers the frame: no pixel could take the model's own frame.
  config_.noise.own_context_share = 1.0;
  try {
    run("covered", 1);
    ADD_FAILURE() << "the consistent target needs pixels outside the sprite and HUD";
  } catch (const Error& e) {
    EXPECT_THAT(e.what(), testing::HasSubstr("field 'loss.own_target': the player sprite and HUD "
                                             "cover every pixel of a 16x16 frame"));
  }
  // At 32x32 the sprite and HUD leave a border of ground.
  use_moved_model(32);
  config_.noise.own_context_share = 0.0;
  try {
    run("no_own", 1);
    ADD_FAILURE() << "the consistent target needs own-history clips";
  } catch (const Error& e) {
    EXPECT_THAT(e.what(), testing::HasSubstr("field 'loss.own_target': needs clips with"));
  }
  expect_played_history_learns(
      "consistent",
      [&] {
        config_.noise.own_context_rollout = true;
        config_.loss.consistent_target = false;
      },
      [&] { config_.loss.consistent_target = true; });
}

// Note [Overlay repair]: damaged overlays change the history from the first step, the run learns
// and resumes exactly (the damage follows the step's seed); it needs a moved reference.
TEST_F(TrainerTest, OverlayDamageTrainsAndNeedsAMovedReference) {
  config_.noise.overlay_damage_share = 1.0;
  expect_needs_moves("noise.overlay_damage_share");
  use_moved_model(32);
  std::vector<double> intact, damaged;
  config_.noise.overlay_damage_share = 0.0;
  run("intact", 5, &intact);
  config_.noise.overlay_damage_share = 1.0;
  run("damaged", 40, &damaged);
  ASSERT_FALSE(intact.empty());
  ASSERT_NO_FATAL_FAILURE(expect_learns(damaged, 8u));
  EXPECT_NE(damaged.front(), intact.front());
  config_.noise.overlay_damage_share = 0.5;
  config_.noise.own_context_share = 0.5;
  config_.noise.own_context_rollout = true;
  expect_resume_equals_straight("damaged", 2, 4);
}

// Note [Overlay repair]: the overlay's extra weight changes the loss from the first step, and
// the run learns.
TEST_F(TrainerTest, OverlayWeightChangesTheLossAndStillLearns) {
  use_moved_model(32);
  config_.loss.reference_weight = 1.0;
  std::vector<double> plain, weighted;
  run("plain", 5, &plain);
  config_.loss.overlay_weight = 5.0;
  run("weighted", 40, &weighted);
  ASSERT_FALSE(plain.empty());
  ASSERT_NO_FATAL_FAILURE(expect_learns(weighted, 8u));
  EXPECT_NE(weighted.front(), plain.front());
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

// Note [Moved reference]: a new head may be wider (the moves' logits). The layers come from the
// trained model, the head starts at zero but for the "as it is" logit, which starts ahead; the
// moved model then trains. A model that differs elsewhere is refused, naming the tensor.
TEST_F(TrainerTest, ANewHeadMayAddTheMovesAndNothingElse) {
  run("first", 20);
  nlohmann::json model = use_moved_model();
  TrainOptions options;
  options.out_dir = (dir_ / "moved").string();
  options.max_steps = 1;
  options.progress_bar = false;
  options.init_new_head = true;
  options.init_from = (dir_ / "first" / "model").string();
  train(config_, options);
  const TensorMap exported = load_tensors(Checkpoint::open((dir_ / "first" / "model").string()));
  const TensorMap state = load_tensors(Checkpoint::open((dir_ / "moved" / "state").string()));
  for (const auto& [name, weight] : exported) {
    if (name.rfind("head.proj.", 0) == 0) continue;
    EXPECT_TRUE(at::allclose(state.at("ema." + name), weight.to(at::kFloat), 1e-3, 1e-3)) << name;
  }
  // Per token: 3 colour channels then 5 logits, each over the 4x4 patch's 16 pixels.
  const at::Tensor bias = state.at("ema.head.proj.bias");
  ASSERT_EQ(bias.size(0), 8 * 16);
  EXPECT_LT(bias.slice(0, 0, 48).abs().max().item<double>(), 0.05);
  EXPECT_NEAR(bias.slice(0, 48, 64).mean().item<double>(), 2.0, 0.05);
  EXPECT_LT(bias.slice(0, 64).abs().max().item<double>(), 0.05);
  EXPECT_LT(state.at("ema.head.proj.weight").abs().max().item<double>(), 0.05);

  std::vector<double> losses;
  run("moved", 40, &losses);
  ASSERT_NO_FATAL_FAILURE(expect_learns(losses, 7u));

  model["hidden"] = 64;
  model["head_dim"] = 32;
  std::ofstream(dir_ / "wider.json") << model.dump(2);
  config_.model_config = (dir_ / "wider.json").string();
  options.out_dir = (dir_ / "wider").string();
  try {
    train(config_, options);
    FAIL() << "a model that differs beyond the head must not start from these weights";
  } catch (const Error& e) {
    EXPECT_THAT(e.what(), testing::HasSubstr("config.json: tensor 'patch_embed.weight'"));
    EXPECT_THAT(e.what(), testing::HasSubstr("only the output head may be new"));
  }
}

// Note [Reference loss]: it adds the chosen reference's error to the loss (the same clips and
// weights give a larger first loss, and the model still learns), and a model without a moved
// reference refuses it by name.
TEST_F(TrainerTest, ReferenceLossAddsTheChosenFramesErrorAndNeedsAMovedReference) {
  config_.loss.reference_weight = 1.0;
  expect_needs_moves("loss.reference_weight");
  use_moved_model();
  std::vector<double> with, without;
  run("with", 40, &with);
  config_.loss.reference_weight = 0.0;
  run("without", 5, &without);
  ASSERT_NO_FATAL_FAILURE(expect_learns(with, 7u));
  ASSERT_FALSE(without.empty());
  EXPECT_GT(with.front(), without.front());
}

// Note [Straight-through moves]: training with the sharpest choice forward gives another loss
// than the mix from the first step, still learns, with own context too; a model without moves
// refuses it by name.
TEST_F(TrainerTest, StraightThroughMovesTrainAndNeedAMovedReference) {
  config_.loss.straight_through_moves = true;
  expect_needs_moves("loss.straight_through_moves");
  use_moved_model();
  config_.noise.own_context_share = 0.5;
  std::vector<double> sharp, mixed;
  run("sharp", 40, &sharp);
  config_.loss.straight_through_moves = false;
  run("mixed", 5, &mixed);
  ASSERT_NO_FATAL_FAILURE(expect_learns(sharp, 7u));
  ASSERT_FALSE(mixed.empty());
  EXPECT_NE(sharp.front(), mixed.front());
}

// Note [Painted pixels], Note [Choice likelihood]: --grow-head keeps the moved model's whole
// head and adds the paint logits far below the rest; the painted model, drawing its own history
// by sample, then trains by the choice's likelihood. A model without moves refuses the loss by
// name, and a checkpoint that is not the same model without paint cannot grow.
TEST_F(TrainerTest, AGrownHeadKeepsTheTrainedHeadAndItsPaintTrainsByLikelihood) {
  config_.loss.choice_weight = 1.0;
  expect_needs_moves("loss.choice_weight");
  config_.loss.choice_weight = 0.0;
  nlohmann::json model = use_moved_model();
  run("moved", 20);
  const nlohmann::json bundled = nlohmann::json::parse(std::ifstream(
      std::string(WORLDCAST_SOURCE_DIR) + "/assets/models/game-small-moves/config.json"));
  model["palette"] = bundled["palette"];  // the game's colours, which the clips are made of
  model["prediction"]["paint"] = true;
  model["prediction"]["move_choice"] = "sample";
  std::ofstream(dir_ / "painted.json") << model.dump(2);
  config_.model_config = (dir_ / "painted.json").string();
  config_.loss.choice_weight = 1.0;
  config_.noise.own_context_share = 0.5;
  TrainOptions options;
  options.out_dir = (dir_ / "painted").string();
  options.max_steps = 1;
  options.progress_bar = false;
  options.init_grown_head = true;
  options.init_from = (dir_ / "moved" / "model").string();
  train(config_, options);
  const TensorMap exported = load_tensors(Checkpoint::open((dir_ / "moved" / "model").string()));
  const TensorMap state = load_tensors(Checkpoint::open((dir_ / "painted" / "state").string()));
  const int64_t colours = static_cast<int64_t>(bundled["palette"]["colours"].size());
  for (const auto& [name, weight] : exported) {
    const at::Tensor ema = state.at("ema." + name);
    // Per token: 3 colour channels and 5 logits as before, then the paint logits, each over the
    // 4x4 patch's 16 pixels.
    const at::Tensor kept = name.rfind("head.proj.", 0) == 0 ? ema.slice(0, 0, 8 * 16) : ema;
    EXPECT_TRUE(at::allclose(kept, weight.to(at::kFloat), 1e-3, 1e-3)) << name;
  }
  const at::Tensor bias = state.at("ema.head.proj.bias");
  ASSERT_EQ(bias.size(0), (8 + colours) * 16);
  EXPECT_NEAR(bias.slice(0, 8 * 16).mean().item<double>(), -8.0, 0.05);
  EXPECT_LT(state.at("ema.head.proj.weight").slice(0, 8 * 16).abs().max().item<double>(), 0.05);

  std::vector<double> losses;
  run("painted", 40, &losses);
  ASSERT_NO_FATAL_FAILURE(expect_learns(losses, 7u));
  // With the moves' own reference loss beside the likelihood (Note [Choice likelihood]).
  config_.loss.reference_weight = 1.0;
  options.out_dir = (dir_ / "referenced").string();
  train(config_, options);
  std::vector<double> referenced;
  run("referenced", 40, &referenced);
  ASSERT_NO_FATAL_FAILURE(expect_learns(referenced, 7u));

  options.out_dir = (dir_ / "regrown").string();
  options.init_from = (dir_ / "painted" / "model").string();
  try {
    train(config_, options);
    FAIL() << "a model that already paints cannot grow paint choices again";
  } catch (const Error& e) {
    EXPECT_THAT(e.what(), testing::HasSubstr("config.json: field 'prediction': growing the head"));
  }
}

// Note [New ground likelihood]: learning new ground from a grown head changes the paint rows
// alone (the exported model is the one it grew from everywhere else, bit for bit), its loss
// falls, it resumes exactly, and it refuses to start without trained weights or paint choices.
TEST_F(TrainerTest, LearningNewGroundTrainsThePaintRowsAlone) {
  nlohmann::json model = use_moved_model();
  run("moved", 30);
  config_.learn = TrainConfig::Learn::kNewGround;
  try {
    TrainOptions options;
    options.out_dir = (dir_ / "no_paint").string();
    options.init_from = (dir_ / "moved" / "model").string();
    options.max_steps = 1;
    options.progress_bar = false;
    train(config_, options);
    ADD_FAILURE() << "a model without paint choices has nothing for new ground to learn";
  } catch (const Error& e) {
    EXPECT_THAT(e.what(), testing::HasSubstr("needs moves and \"paint\": true"));
  }
  const nlohmann::json bundled = nlohmann::json::parse(std::ifstream(
      std::string(WORLDCAST_SOURCE_DIR) + "/assets/models/game-small-moves/config.json"));
  model["palette"] = bundled["palette"];  // the game's colours, which the clips are made of
  model["prediction"]["paint"] = true;
  model["prediction"]["move_choice"] = "new_ground";
  std::ofstream(dir_ / "new_ground.json") << model.dump(2);
  config_.model_config = (dir_ / "new_ground.json").string();
  config_.noise.schedule_share = 1.0;
  config_.noise.schedule_levels = {1.0};
  try {
    run("fresh", 1);
    ADD_FAILURE() << "new ground is learned on top of trained weights";
  } catch (const Error& e) {
    EXPECT_THAT(e.what(), testing::HasSubstr("run.json: field 'learn'"));
  }
  const auto grown = [&](const std::string& name, int64_t steps, std::vector<double>* losses) {
    TrainOptions options;
    options.out_dir = (dir_ / name).string();
    options.init_from = (dir_ / "moved" / "model").string();
    options.init_grown_head = true;
    options.max_steps = steps;
    options.progress_bar = false;
    return train(config_, options, [&](const StepReport& r) {
      if (losses) losses->push_back(r.loss);
    });
  };
  std::vector<double> losses;
  grown("learned", 40, &losses);
  ASSERT_NO_FATAL_FAILURE(expect_learns(losses, 8u));
  const TensorMap before = load_tensors(Checkpoint::open((dir_ / "moved" / "model").string()));
  const TensorMap after = load_tensors(Checkpoint::open((dir_ / "learned" / "model").string()));
  ASSERT_EQ(before.size(), after.size());
  const int64_t kept_rows = 8 * 16;  // 3 colour channels and 5 moves, each over 16 pixels
  for (const auto& [name, weight] : before) {
    const at::Tensor now = after.at(name);
    const bool head = name.rfind("head.proj.", 0) == 0;
    EXPECT_TRUE(at::equal(head ? now.slice(0, 0, kept_rows) : now, weight)) << name;
    if (head) {
      EXPECT_EQ(now.size(0), (8 + 26) * 16) << name;
    }
  }
  EXPECT_GT(after.at("head.proj.weight").slice(0, kept_rows).abs().max().item<double>(), 1e-3);
  // Resumed at step 2 of 4, the state equals that of one run of 4 steps.
  grown("straight", 4, nullptr);
  grown("resumed", 2, nullptr);
  EXPECT_EQ(grown("resumed", 4, nullptr).first_step, 2);
  const auto state = [&](const std::string& name) {
    return load_tensors(Checkpoint::open((dir_ / name / "state").string()));
  };
  const TensorMap a = state("straight"), b = state("resumed");
  for (const auto& [name, tensor] : a) EXPECT_TRUE(tensor.equal(b.at(name))) << name;
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
