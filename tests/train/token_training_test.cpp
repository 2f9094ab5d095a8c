// Note [Masked training]: the masked sequence equals play's cached forward frame by frame, its
// draws follow the spec, the scrolled-in strip is the one the game's camera revealed, and the
// token training loop learns and exports a model that plays.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>
#include <random>
#include <set>

#include "engine/core/error.h"
#include "engine/game/game.h"
#include "engine/model/codebook.h"
#include "engine/model/dit.h"
#include "engine/model/model_config.h"
#include "engine/model/tokenizer.h"
#include "engine/model/weights.h"
#include "engine/rollout/kernel_trace.h"
#include "engine/rollout/session.h"
#include "engine/train/token_batch.h"
#include "engine/train/train_config.h"
#include "engine/train/trainer.h"
#include "tests/model/model_test_util.h"

namespace wc::train {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;

TEST(MakeTokenBatch, MasksOnlyTheChosenFramesAndWeighsOnlyMaskedPlaces) {
  const int64_t vocab = 50;
  const at::Tensor tokens = at::randint(0, vocab, {3, 9, 4, 4}, at::kLong);
  const at::Tensor actions = at::randint(0, 5, {3, 9}, at::kLong);
  const at::Tensor positions = at::arange(9, at::kLong).repeat({3, 1}) + 100;
  TokenSpec spec;
  spec.noisy_frames = 4;
  spec.corrupt_share = 1.0;
  spec.max_corrupt = 0.5;
  const TokenBatch batch = make_token_batch(tokens, actions, positions, spec, vocab, 0.0, 5, 11);
  ASSERT_EQ(batch.noisy.size(), 4u);
  EXPECT_TRUE(std::is_sorted(batch.noisy.begin(), batch.noisy.end()));
  EXPECT_GE(batch.noisy.front(), 1);
  EXPECT_EQ(batch.input.frames.sizes(), (at::IntArrayRef{3, 13, 4, 4}));
  EXPECT_EQ(batch.input.head_first_frame, 9);
  // The sink frame is never corrupted; the masked frames hold the truth or the mask.
  EXPECT_TRUE(batch.input.frames.slice(1, 0, 1).equal(tokens.slice(1, 0, 1)));
  for (size_t k = 0; k < batch.noisy.size(); ++k) {
    const at::Tensor shown =
        batch.input.frames.select(1, 9 + static_cast<int64_t>(k)).reshape({3, 16});
    const at::Tensor truth = tokens.select(1, batch.noisy[k]).reshape({3, 16});
    const at::Tensor masked = shown == vocab;
    EXPECT_TRUE(masked.any(1).all().item<bool>()) << "every masked frame masks a token";
    EXPECT_TRUE(at::where(masked, truth, shown).equal(truth));
    EXPECT_TRUE(batch.targets.select(1, static_cast<int64_t>(k)).equal(truth));
    const at::Tensor w = batch.weights.select(1, static_cast<int64_t>(k));
    EXPECT_TRUE((w.gt(0) == masked).all().item<bool>());
    // t is the masked share.
    EXPECT_TRUE(at::allclose(batch.input.t.select(1, 9 + static_cast<int64_t>(k)),
                             masked.to(at::kFloat).mean(1)));
    EXPECT_TRUE(batch.input.positions.select(1, 9 + static_cast<int64_t>(k))
                    .equal(positions.select(1, batch.noisy[k])));
  }
  // Corruption happened somewhere in the context, and the same seed draws the same batch.
  EXPECT_FALSE(batch.input.frames.slice(1, 0, 9).equal(tokens));
  const TokenBatch again = make_token_batch(tokens, actions, positions, spec, vocab, 0.0, 5, 11);
  EXPECT_TRUE(again.input.frames.equal(batch.input.frames));
  EXPECT_EQ(again.noisy, batch.noisy);
}

TEST(MakeTokenBatch, OverlayCellsWeighTheirWeightMore) {
  const int64_t vocab = 30;
  const at::Tensor tokens = at::randint(0, vocab, {2, 5, 4, 4}, at::kLong);
  const at::Tensor actions = at::zeros({2, 5}, at::kLong);
  const at::Tensor positions = at::arange(5, at::kLong).repeat({2, 1});
  TokenSpec spec;
  spec.noisy_frames = 3;
  spec.new_ground_weight = 1.0;
  spec.overlay_weight = 4.0;
  at::Tensor cells = at::zeros({4, 4}, at::kBool);
  cells[1][2] = true;
  const TokenBatch plain = make_token_batch(tokens, actions, positions, spec, vocab, 0.0, 5, 8);
  const TokenBatch weighted =
      make_token_batch(tokens, actions, positions, spec, vocab, 0.0, 5, 8, cells);
  const at::Tensor expected =
      plain.weights * (1.0 + 3.0 * cells.to(at::kFloat).reshape({1, 1, 16}));
  EXPECT_TRUE(at::allclose(weighted.weights, expected));
  EXPECT_TRUE(weighted.input.frames.equal(plain.input.frames));
  // Note [Strip calibration]: new ground is the scored strip outside the overlay cells.
  const at::Tensor strip =
      scrolled_in(tokens)
          .index_select(1, at::tensor(std::vector<int64_t>(plain.noisy.begin(), plain.noisy.end())))
          .reshape({2, 3, 16});
  EXPECT_TRUE(plain.new_ground.equal(strip.logical_and(plain.weights > 0)));
  EXPECT_TRUE(weighted.new_ground.equal(
      plain.new_ground.logical_and(cells.reshape({1, 1, 16}).logical_not())));
}

// Note [Overlay corruption]: in a chosen clip, only overlay cells change, only from one frame
// on (never the sink), each to a token of the clip; the masked copies still show and score the
// truth; the batch's other draws are those of the spec without it.
TEST(MakeTokenBatch, OverlayCorruptionBreaksTheOverlayFromAFrameOn) {
  const int64_t vocab = 1000, b = 6, f = 9;
  // Distinct tokens per place, so every replaced one shows.
  const at::Tensor tokens = at::arange(b * f * 16, at::kLong).view({b, f, 4, 4}).remainder(vocab);
  const at::Tensor actions = at::zeros({b, f}, at::kLong);
  const at::Tensor positions = at::arange(f, at::kLong).repeat({b, 1});
  at::Tensor cells = at::zeros({4, 4}, at::kBool);
  cells[1][2] = true;
  cells[2][2] = true;
  TokenSpec spec;
  spec.noisy_frames = 3;
  spec.corrupt_share = 0.0;
  const TokenBatch plain =
      make_token_batch(tokens, actions, positions, spec, vocab, 0.0, 5, 21, cells);
  spec.overlay_corrupt_share = 1.0;
  const TokenBatch broken =
      make_token_batch(tokens, actions, positions, spec, vocab, 0.0, 5, 21, cells);
  EXPECT_EQ(broken.noisy, plain.noisy);
  EXPECT_TRUE(broken.targets.equal(plain.targets));
  EXPECT_TRUE(broken.weights.equal(plain.weights));
  EXPECT_TRUE(broken.input.frames.slice(1, f).equal(plain.input.frames.slice(1, f)));
  const at::Tensor context = broken.input.frames.slice(1, 0, f).reshape({b, f, 16});
  const at::Tensor truth = tokens.reshape({b, f, 16});
  const at::Tensor changed = context != truth;
  const at::Tensor overlay = cells.reshape({1, 1, 16});
  EXPECT_FALSE((changed & ~overlay).any().item<bool>()) << "only overlay cells change";
  EXPECT_FALSE(changed.select(1, 0).any().item<bool>()) << "the sink is never corrupted";
  for (int64_t r = 0; r < b; ++r) {
    const at::Tensor frames_hit = changed[r].any(1);
    ASSERT_TRUE(frames_hit.any().item<bool>()) << "clip " << r;
    const int64_t first = frames_hit.nonzero()[0][0].item<int64_t>();
    // From the first broken frame on, each frame's overlay is replaced (a draw may land on its
    // own token only by chance: 2 cells of 144 places).
    EXPECT_GE(frames_hit.slice(0, first).to(at::kFloat).mean().item<double>(), 0.75)
        << "clip " << r;
    // Every token shown is one of the clip's.
    const at::Tensor clip = truth[r].reshape({-1});
    const at::Tensor shown = context[r].reshape({-1});
    EXPECT_TRUE(at::isin(shown, clip).all().item<bool>());
  }
  // The first broken frame varies over clips.
  std::set<int64_t> firsts;
  for (int64_t r = 0; r < b; ++r) firsts.insert(changed[r].any(1).nonzero()[0][0].item<int64_t>());
  EXPECT_GT(firsts.size(), 1u);
  // With share 0, or without overlay cells, nothing changes.
  const TokenBatch no_cells = make_token_batch(tokens, actions, positions, spec, vocab, 0.0, 5, 21);
  EXPECT_TRUE(no_cells.input.frames.equal(plain.input.frames));
}

// The game's frames for `actions`, their exact codebook, and the true camera step of each frame.
struct GameTokens {
  model::Codebook book;
  at::Tensor tokens;                       // [1, F, 16, 16]
  std::vector<std::pair<int, int>> moves;  // (dy, dx) in patches, frame f from frame f − 1
};

GameTokens game_tokens(const std::vector<game::Action>& actions, uint64_t seed) {
  game::Game g({128, 128, seed, true});
  std::vector<std::vector<uint8_t>> frames = {g.frame()};
  GameTokens out;
  out.moves.push_back({0, 0});
  for (game::Action a : actions) {
    const int x = g.camera_x(), y = g.camera_y();
    g.step(a);
    frames.push_back(g.frame());
    out.moves.push_back({(g.camera_y() - y) / 8, (g.camera_x() - x) / 8});
  }
  std::map<std::array<uint8_t, 3>, uint8_t> colours;
  std::map<std::vector<uint8_t>, int64_t> entries;
  const int64_t f = static_cast<int64_t>(frames.size());
  out.tokens = at::empty({1, f, 16, 16}, at::kLong);
  for (int64_t i = 0; i < f; ++i) {
    for (int ty = 0; ty < 16; ++ty) {
      for (int tx = 0; tx < 16; ++tx) {
        std::vector<uint8_t> entry;
        for (int py = 0; py < 8; ++py) {
          for (int px = 0; px < 8; ++px) {
            const uint8_t* p =
                &frames[static_cast<size_t>(i)][((ty * 8 + py) * 128 + tx * 8 + px) * 4];
            const std::array<uint8_t, 3> c{p[0], p[1], p[2]};
            auto it = colours.find(c);
            if (it == colours.end()) {
              it = colours.emplace(c, static_cast<uint8_t>(colours.size())).first;
              out.book.colours.push_back(c);
            }
            entry.push_back(it->second);
          }
        }
        auto e = entries.find(entry);
        if (e == entries.end()) {
          e = entries.emplace(entry, static_cast<int64_t>(out.book.entries.size())).first;
          out.book.entries.push_back(entry);
        }
        out.tokens[0][i][ty][tx] = e->second;
      }
    }
  }
  return out;
}

TEST(ScrolledIn, IsTheStripTheGamesCameraRevealed) {
  std::mt19937 random(std::random_device{}());
  std::vector<game::Action> actions;
  for (int i = 0; i < 60; ++i) actions.push_back(static_cast<game::Action>(random() % 5));
  const GameTokens g = game_tokens(actions, random() % 1000);
  const at::Tensor strip = scrolled_in(g.tokens);
  for (size_t f = 1; f < g.moves.size(); ++f) {
    const auto [dy, dx] = g.moves[f];
    for (int y = 0; y < 16; ++y) {
      for (int x = 0; x < 16; ++x) {
        const bool revealed =
            (dy > 0 && y == 15) || (dy < 0 && y == 0) || (dx > 0 && x == 15) || (dx < 0 && x == 0);
        ASSERT_EQ(strip[0][static_cast<int64_t>(f)][y][x].item<bool>(), revealed)
            << "frame " << f << " move " << dy << "," << dx << " cell " << y << "," << x;
      }
    }
  }
  EXPECT_FALSE(strip.select(1, 0).any().item<bool>());
}

// The masked sequence's logits for each masked frame equal play's: the context committed frame
// by frame through a cached policy, then the masked frame through it.
TEST(MakeTokenBatch, TrainingSequenceEqualsThePlayedForward) {
  const fs::path dir = fs::temp_directory_path() / ("wc_tokseq_" + std::to_string(::getpid()));
  fs::create_directories(dir);
  model::Codebook book;
  book.patch = 4;
  book.colours = {{0, 0, 0}, {255, 255, 255}};
  for (int e = 0; e < 12; ++e) {
    std::vector<uint8_t> entry(16);
    for (int i = 0; i < 16; ++i) entry[static_cast<size_t>(i)] = (e >> (i % 4)) & 1 ? 1 : 0;
    entry[static_cast<size_t>(4 + e)] = 1 - entry[static_cast<size_t>(4 + e) % 16];
    book.entries.push_back(entry);
  }
  model::ModelConfig c = testing::tiny_config();
  c.tokens.vocab = book.size();
  c.tokens.codebook = std::make_shared<const model::Codebook>(book);
  model::CausalDiT net(c);
  model::init_random_weights(net, 17);
  const int64_t f = 6;
  const at::Tensor tokens = at::randint(0, book.size(), {1, f, 4, 4}, at::kLong);
  const at::Tensor actions = at::randint(0, 5, {1, f}, at::kLong);
  const at::Tensor positions = at::arange(f, at::kLong).unsqueeze(0) + 40;
  TokenSpec spec;
  spec.noisy_frames = 3;
  spec.corrupt_share = 1.0;
  spec.max_corrupt = 0.3;
  const TokenBatch batch =
      make_token_batch(tokens, actions, positions, spec, c.tokens.vocab, 0.0, 5, 3);
  at::NoGradGuard no_grad;
  const at::Tensor trained = net->forward_stream(batch.input, batch.stream);
  for (size_t k = 0; k < batch.noisy.size(); ++k) {
    const int p = batch.noisy[k];
    attention::ModelShape shape;
    shape.num_layers = c.layers;
    shape.num_heads = c.heads;
    shape.head_dim = c.head_dim;
    shape.geometry = {1, 4, 4};
    testing::FullHistoryPolicy policy(shape);
    attention::StepInfo clean;
    clean.clean_pass = true;
    clean.geometry = {1, 4, 4};
    for (int i = 0; i < p; ++i) {
      model::FrameBatch context{batch.input.frames.slice(1, i, i + 1), at::zeros({1, 1}),
                                actions.slice(1, i, i + 1), positions[0][i].item<int64_t>(),
                                at::Tensor()};
      clean.block_index = i;
      net->forward_block(context, policy, clean);
    }
    const int64_t row = f + static_cast<int64_t>(k);
    model::FrameBatch masked{batch.input.frames.slice(1, row, row + 1),
                             batch.input.t.slice(1, row, row + 1), actions.slice(1, p, p + 1),
                             positions[0][p].item<int64_t>(), at::Tensor()};
    attention::StepInfo step;
    step.geometry = {1, 4, 4};
    step.block_index = p;
    const at::Tensor played = net->forward_block(masked, policy, step);
    EXPECT_TRUE(
        at::allclose(played.squeeze(1), trained.select(1, static_cast<int64_t>(k)), 1e-4, 1e-4))
        << "masked frame " << p;
  }
  fs::remove_all(dir);
}

// Note [Drawn quarters]: the context keeps its quarters; a masked frame carries its clip frame's
// quarter where `known` says, else −1.
TEST(StreamQuarters, MaskedFramesKnowTheirQuartersWhereChosen) {
  const at::Tensor quarters = at::tensor({0, 1, 3, 2, 1, 0, 2, 3}, at::kLong).view({2, 4});
  const std::vector<int> noisy = {1, 3};
  const at::Tensor none = stream_quarters(quarters, noisy);
  ASSERT_EQ(none.sizes(), (at::IntArrayRef{2, 6}));
  EXPECT_TRUE(none.slice(1, 0, 4).equal(quarters));
  EXPECT_TRUE((none.slice(1, 4) == -1).all().item<bool>());
  const at::Tensor known = at::tensor({1, 0, 0, 1}, at::kLong).view({2, 2}).to(at::kBool);
  const at::Tensor some = stream_quarters(quarters, noisy, known);
  EXPECT_TRUE(some.slice(1, 0, 4).equal(quarters));
  EXPECT_EQ(some[0][4].item<int64_t>(), 1);  // clip 0, frame 1
  EXPECT_EQ(some[0][5].item<int64_t>(), -1);
  EXPECT_EQ(some[1][4].item<int64_t>(), -1);
  EXPECT_EQ(some[1][5].item<int64_t>(), 3);  // clip 1, frame 3
  EXPECT_THROW(stream_quarters(quarters, noisy, at::ones({2, 3}, at::kBool)), c10::Error);
}

TEST(MaskedTokenLoss, IsTheWeightedMeanCrossEntropy) {
  const at::Tensor logits = at::randn({2, 3, 5, 7});
  const at::Tensor targets = at::randint(0, 7, {2, 3, 5}, at::kLong);
  const at::Tensor weights = at::rand({2, 3, 5}) * (at::rand({2, 3, 5}) > 0.5);
  const at::Tensor log_p =
      at::log_softmax(logits, -1).gather(-1, targets.unsqueeze(-1)).squeeze(-1);
  const at::Tensor expected = -(log_p * weights).sum() / weights.sum();
  EXPECT_TRUE(at::allclose(masked_token_loss(logits, targets, weights), expected, 1e-5, 1e-6));
}

class TokenTrainerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("wc_token_trainer_" + std::to_string(::getpid()));
    fs::remove_all(dir_);
    fs::create_directories(dir_);
    // The codebook of the game's patches at 32x32 frames, 8-pixel patches, a short walk.
    std::vector<game::Action> walk;
    for (int i = 0; i < 40; ++i) walk.push_back(static_cast<game::Action>(1 + (i / 5) % 4));
    model::Codebook book = game_tokens(walk, 1).book;  // 128x128 frames: a superset of patches
    model::write_codebook((dir_ / "codebook.txt").string(), book);
    nlohmann::json model = {
        {"name", "tiny-tokens"},
        {"channels", 3},
        {"frame", {{"height", 32}, {"width", 32}}},
        {"resolutions", nlohmann::json::object()},
        {"video_frames_per_frame", 1},
        {"autoencoder", nullptr},
        {"patch", {1, 8, 8}},
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
        {"tokens", {{"codebook", "codebook.txt"}, {"vocab", book.size()}, {"passes", 2}}}};
    std::ofstream(dir_ / "model.json") << model.dump(2);
    config_.file = (dir_ / "run.json").string();
    config_.model_config = (dir_ / "model.json").string();
    config_.batch = 4;
    config_.clips.frames = 5;
    config_.clips.width = 32;
    config_.clips.height = 32;
    config_.clips.max_walk = 20;
    config_.has_tokens = true;
    config_.tokens.noisy_frames = 2;
    config_.learning_rate = 3e-3;
    config_.warmup_steps = 2;
    config_.data_workers = 2;
    config_.log_every = 5;
    config_.state_dtype = "f32";
    config_.checkpoint_minutes = 1000;
  }

  // Trains config_ for 30 steps into dir_/run and checks that the logged loss fell.
  void expect_learns_in_30_steps() {
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
  }
  void TearDown() override { fs::remove_all(dir_); }
  fs::path dir_;
  TrainConfig config_;
};

TEST_F(TokenTrainerTest, LearnsAndExportsAModelThatPlays) {
  ASSERT_NO_FATAL_FAILURE(expect_learns_in_30_steps());
  // Note [Strip calibration]: each log line carries the strip's expected and true mix. (At 4x4
  // cells the HUD and sprite fill half the frame, so the still shift explains most tokens and
  // scrolled_in finds no strip; the figures are then null.)
  std::ifstream log((dir_ / "run" / "log.jsonl").string());
  std::string line;
  int lines = 0;
  while (std::getline(log, line)) {
    const nlohmann::json entry = nlohmann::json::parse(line);
    const nlohmann::json& strip = entry.at("strip_non_grass");
    for (const char* side : {"model", "game"}) {
      if (strip.at("places") == 0) {
        EXPECT_TRUE(strip.at(side).is_null()) << line;
        continue;
      }
      EXPECT_GE(strip.at(side).get<double>(), 0.0) << line;
      EXPECT_LE(strip.at(side).get<double>(), 1.0) << line;
    }
    EXPECT_TRUE(entry.contains("strip_water")) << line;
    // Note [Step phases]: each window's first step, timed phase by phase.
    const nlohmann::json& phases = entry.at("step_ms");
    for (const char* phase : {"clips", "encode", "batch", "forward", "backward", "optimizer"}) {
      EXPECT_GE(phases.at(phase).get<double>(), 0.0) << line;
    }
    EXPECT_GT(phases.at("forward").get<double>() + phases.at("backward").get<double>(), 0.0)
        << line;
    ++lines;
  }
  EXPECT_EQ(lines, 6);
  // The exported folder carries its codebook and plays.
  EXPECT_TRUE(fs::exists(dir_ / "run" / "model" / "codebook.txt"));
  const model::ModelConfig exported =
      model::load_model_config((dir_ / "run" / "model" / "config.json").string());
  ASSERT_TRUE(exported.tokens.active());
  auto session = rollout::Session::create(exported, (dir_ / "run" / "model").string(), "dense",
                                          {{"window", 4}}, 3, at::kCPU);
  for (int i = 0; i < 3; ++i) session->step(game::Action::kRight);
  EXPECT_EQ(session->frame_index(), 3u);
  // A resumed run continues from its state.
  TrainOptions options;
  options.out_dir = (dir_ / "run").string();
  options.max_steps = 35;
  options.progress_bar = false;
  EXPECT_EQ(train(config_, options).first_step, 30);
}

// A kernel trace needs a build that records one (LibTorch 2 with CUDA); elsewhere --trace is
// refused before the first step, naming the option.
TEST_F(TokenTrainerTest, AKernelTraceIsRefusedWhereTheBuildCannotRecordOne) {
  if (rollout::KernelTrace::available()) GTEST_SKIP() << "this build records kernel traces";
  TrainOptions options;
  options.out_dir = (dir_ / "run").string();
  options.max_steps = 3;
  options.progress_bar = false;
  options.trace_file = (dir_ / "trace.json").string();
  try {
    train(config_, options);
    FAIL() << "expected a refusal";
  } catch (const Error& e) {
    EXPECT_THAT(e.what(), ::testing::HasSubstr("--trace"));
  }
  EXPECT_FALSE(fs::exists(dir_ / "trace.json"));
  EXPECT_FALSE(fs::exists(dir_ / "run" / "state"));
}

// Note [Own token context]: with half the clips played by the model itself, the loop still learns.
TEST_F(TokenTrainerTest, LearnsWithPlayedContexts) {
  config_.tokens.own_share = 0.5;
  ASSERT_NO_FATAL_FAILURE(expect_learns_in_30_steps());
  EXPECT_TRUE(fs::exists(dir_ / "run" / "model" / "config.json"));
}

// Note [Drawn context]: with its own draws in half the contexts, beside played ones, the loop
// learns and logs how many carried places the draws changed.
TEST_F(TokenTrainerTest, LearnsWithDrawnContexts) {
  config_.tokens.own_share = 0.25;
  config_.tokens.drawn_share = 0.5;
  config_.tokens.drawn_temperature = 2.0;
  ASSERT_NO_FATAL_FAILURE(expect_learns_in_30_steps());
  std::ifstream log(dir_ / "run" / "log.jsonl");
  std::string line;
  int lines = 0;
  while (std::getline(log, line)) {
    const nlohmann::json j = nlohmann::json::parse(line);
    ASSERT_TRUE(j.contains("drawn_changed_share")) << line;
    const double changed = j["drawn_changed_share"].get<double>();
    EXPECT_GT(changed, 0.0);
    EXPECT_LE(changed, 1.0);
    ++lines;
  }
  EXPECT_GE(lines, 2);
}

// Note [Drawn quarters]: a model with tile quarters learns with its masked frames' quarters shown
// in half of them, beside played contexts whose passes follow the drawn frame's quarters, and
// plays with "drawn_quarters" in its passes after the first; without tile quarters the share is
// refused.
TEST_F(TokenTrainerTest, LearnsWithDrawnQuarters) {
  nlohmann::json json = nlohmann::json::parse(std::ifstream(dir_ / "model.json"));
  json["tile_quarters"] = {1, 1};
  json["tokens"]["drawn_quarters"] = true;
  std::ofstream(dir_ / "quarters.json") << json.dump(2);
  config_.tokens.drawn_quarters_share = 0.5;
  TrainOptions refused;
  refused.out_dir = (dir_ / "refused").string();
  refused.max_steps = 1;
  refused.progress_bar = false;
  try {
    train(config_, refused);
    ADD_FAILURE() << "drawn quarters trained on a model without tile quarters";
  } catch (const Error& e) {
    EXPECT_THAT(e.what(), HasSubstr("tokens.drawn_quarters_share"));
  }
  config_.model_config = (dir_ / "quarters.json").string();
  config_.tokens.own_share = 0.25;
  ASSERT_NO_FATAL_FAILURE(expect_learns_in_30_steps());
  const model::ModelConfig exported =
      model::load_model_config((dir_ / "run" / "model" / "config.json").string());
  ASSERT_TRUE(exported.tokens.drawn_quarters);
  auto session = rollout::Session::create(exported, (dir_ / "run" / "model").string(), "dense",
                                          {{"window", 4}}, 3, at::kCPU);
  for (int i = 0; i < 3; ++i) session->step(game::Action::kRight);
  EXPECT_EQ(session->frame_index(), 3u);
}

// Note [Tile quarters]: a model grows the quarter vectors from one without them, starting at zero,
// and a run that learns them plays.
TEST_F(TokenTrainerTest, GrowsTileQuartersFromAModelWithout) {
  TrainOptions options;
  options.out_dir = (dir_ / "plain").string();
  options.max_steps = 10;
  options.progress_bar = false;
  train(config_, options);
  const std::string plain_dir = (dir_ / "plain" / "model").string();

  nlohmann::json json = nlohmann::json::parse(std::ifstream(dir_ / "model.json"));
  json["tile_quarters"] = {1, 1};
  std::ofstream(dir_ / "quarters.json") << json.dump(2);
  config_.model_config = (dir_ / "quarters.json").string();
  options.init_from = plain_dir;
  options.out_dir = (dir_ / "still").string();
  options.max_steps = 2;
  const double learning_rate = config_.learning_rate;
  config_.learning_rate = 0.0;  // the grown model as it starts
  train(config_, options);
  const model::ModelConfig grown =
      model::load_model_config((dir_ / "still" / "model" / "config.json").string());
  ASSERT_EQ(grown.tile_quarters, (std::vector<int>{1, 1}));
  model::CausalDiT still(grown);
  model::load_weights(still, (dir_ / "still" / "model").string());
  model::CausalDiT plain(model::load_model_config(plain_dir + "/config.json"));
  model::load_weights(plain, plain_dir);
  EXPECT_TRUE(still->tile_quarters->weight.eq(0).all().item<bool>());
  model::FrameBatch batch{at::randint(0, grown.tokens.vocab + 1, {2, 3, 4, 4}, at::kLong),
                          at::rand({2, 3}), at::randint(0, 6, {2, 3}, at::kLong), 0, at::Tensor()};
  batch.quarters = at::randint(-1, 4, {2, 3}, at::kLong);
  EXPECT_TRUE(at::allclose(still->forward_train(batch), plain->forward_train(batch), 1e-5, 1e-5));

  // Trained, the vectors learn, and the model plays with its quarters followed.
  config_.learning_rate = learning_rate;
  options.out_dir = (dir_ / "trained").string();
  options.max_steps = 10;
  train(config_, options);
  model::CausalDiT trained(grown);
  model::load_weights(trained, (dir_ / "trained" / "model").string());
  EXPECT_GT(trained->tile_quarters->weight.abs().max().item<double>(), 0.0);
  auto session = rollout::Session::create(grown, (dir_ / "trained" / "model").string(), "dense",
                                          {{"window", 4}}, 3, at::kCPU);
  for (int i = 0; i < 3; ++i) session->step(game::Action::kRight);
  EXPECT_EQ(session->frame_index(), 3u);

  // A model that differs in more than the table is refused by the tensor's name.
  json["hidden"] = 64;
  json["mlp"] = 128;
  json["head_dim"] = 32;
  std::ofstream(dir_ / "wider.json") << json.dump(2);
  config_.model_config = (dir_ / "wider.json").string();
  options.out_dir = (dir_ / "wider").string();
  try {
    train(config_, options);
    ADD_FAILURE() << "grew a model of another width";
  } catch (const Error& e) {
    EXPECT_THAT(e.what(), HasSubstr("config.json"));
    EXPECT_THAT(e.what(), HasSubstr("tensor '"));
  }

  // Note [Quarter tracking]: its own play follows the quarters its tokens make, and it learns.
  config_.model_config = (dir_ / "quarters.json").string();
  config_.tokens.own_share = 0.5;
  options.init_from = (dir_ / "trained" / "model").string();
  options.out_dir = (dir_ / "own").string();
  std::vector<double> losses;
  train(config_, options, [&](const StepReport& r) { losses.push_back(r.loss); });
  ASSERT_FALSE(losses.empty());
  EXPECT_TRUE(std::isfinite(losses.back()));
  EXPECT_TRUE(fs::exists(dir_ / "own" / "model" / "config.json"));
}

TEST_F(TokenTrainerTest, RefusesAMissingTokensSection) {
  config_.has_tokens = false;
  TrainOptions options;
  options.out_dir = (dir_ / "run").string();
  options.max_steps = 1;
  try {
    train(config_, options);
    ADD_FAILURE() << "trained without a tokens section";
  } catch (const Error& e) {
    EXPECT_THAT(e.what(), HasSubstr("field 'tokens'"));
  }
}

}  // namespace
}  // namespace wc::train
