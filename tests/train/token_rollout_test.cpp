// Note [Own token context]: the cached forward a played clip is drawn through equals the masked
// training sequence, the play follows the model's sampler, and the targets are the game's rule
// applied to the model's frame.
#include <gtest/gtest.h>

#include <array>
#include <filesystem>
#include <fstream>
#include <map>
#include <random>
#include <set>

#include "engine/game/game.h"
#include "engine/model/codebook.h"
#include "engine/model/dit.h"
#include "engine/model/tile_quarters.h"
#include "engine/model/weights.h"
#include "engine/train/drawn_context.h"
#include "engine/train/overlay_mask.h"
#include "engine/train/token_batch.h"
#include "engine/train/token_rollout.h"
#include "engine/train/trainer.h"
#include "tests/model/model_test_util.h"

namespace wc::train {
namespace {

namespace fs = std::filesystem;

model::ModelConfig token_config(int vocab) {
  model::Codebook book;
  book.patch = 4;
  book.colours = {{0, 0, 0}, {255, 255, 255}};
  for (int e = 0; e < vocab; ++e) {
    std::vector<uint8_t> entry(16);
    for (int i = 0; i < 16; ++i) entry[static_cast<size_t>(i)] = (e >> (i % 5)) & 1;
    entry[static_cast<size_t>(e % 16)] ^= 1;
    book.entries.push_back(entry);
  }
  model::ModelConfig c = testing::tiny_config();
  c.tokens.vocab = vocab;
  c.tokens.passes = 3;
  c.tokens.sure = 0.9;
  c.tokens.codebook = std::make_shared<const model::Codebook>(book);
  return c;
}

// The reference for a cached forward: the masked training sequence's logits for `frame` ([B, 1,
// h, w] at its masked share `t`, [B, 1]) after the clean frames 0..p−1 of `clip`, under the
// clip's `actions` and `positions` ([B, F]); with `quarters` ([B, F]), the context frames carry
// theirs and the frame none.
at::Tensor masked_sequence_logits(model::CausalDiT& net, const at::Tensor& clip,
                                  const at::Tensor& frame, const at::Tensor& t,
                                  const at::Tensor& actions, const at::Tensor& positions, int64_t p,
                                  const at::Tensor& quarters = at::Tensor()) {
  const int64_t b = clip.size(0);
  model::FrameBatch reference;
  reference.frames = at::cat({clip.slice(1, 0, p), frame}, 1);
  reference.t = at::cat({at::zeros({b, p}), t}, 1);
  reference.actions = actions.slice(1, 0, p + 1);
  reference.positions = positions.slice(1, 0, p + 1);
  if (quarters.defined()) {
    reference.quarters = at::cat({quarters.slice(1, 0, p), at::full({b, 1}, -1, at::kLong)}, 1);
  }
  reference.head_first_frame = static_cast<int>(p);
  const at::Tensor mask =
      model::MaskedStream{static_cast<int>(p), {static_cast<int>(p)}, 16}.mask(at::kCPU);
  return net->forward_masked(reference, mask);
}

// Fast path against reference: a masked frame's logits through the cache of frames committed one
// at a time equal the masked training sequence's, for a batch of clips.
TEST(CachedTokenForward, EqualsTheMaskedSequence) {
  std::mt19937 random(std::random_device{}());
  const model::ModelConfig c = token_config(12);
  model::CausalDiT net(c);
  model::init_random_weights(net, random());
  const int64_t b = 3, f = 5;
  at::manual_seed(random());
  const at::Tensor tokens = at::randint(0, c.tokens.vocab, {b, f, 4, 4}, at::kLong);
  const at::Tensor actions = at::randint(0, 5, {b, f}, at::kLong);
  const at::Tensor positions =
      at::arange(f, at::kLong).repeat({b, 1}) + at::randint(0, 50, {b, 1}, at::kLong);
  at::NoGradGuard no_grad;
  CachedTokenForward cached(*net);
  for (int64_t p = 0; p < f; ++p) {
    // Frame p with some tokens masked, against the committed frames 0..p−1.
    at::Tensor shown = tokens.slice(1, p, p + 1).clone();
    shown.masked_fill_(at::rand(shown.sizes()) < 0.5, c.tokens.vocab);
    const at::Tensor t = (shown == c.tokens.vocab).to(at::kFloat).mean({2, 3});
    const at::Tensor fast =
        cached.logits(shown, t, actions.slice(1, p, p + 1), positions.slice(1, p, p + 1));
    const at::Tensor expected =
        masked_sequence_logits(net, tokens, shown, t, actions, positions, p);
    EXPECT_TRUE(at::allclose(fast, expected, 1e-4, 1e-4)) << "frame " << p;
    cached.commit(tokens.slice(1, p, p + 1), actions.slice(1, p, p + 1),
                  positions.slice(1, p, p + 1));
  }
  EXPECT_EQ(cached.frames(), f);
}

TEST(PlayTokenClips, KeepsTheSeedFramesAndDrawsEveryOtherFromTheCodebook) {
  std::mt19937 random(std::random_device{}());
  const model::ModelConfig c = token_config(10);
  model::CausalDiT net(c);
  model::init_random_weights(net, random());
  const at::Tensor truth = at::randint(0, c.tokens.vocab, {2, 6, 4, 4}, at::kLong);
  const at::Tensor actions = at::randint(0, 5, {2, 6}, at::kLong);
  const at::Tensor positions = at::arange(6, at::kLong).repeat({2, 1});
  const uint64_t seed = random();
  const at::Tensor played = play_token_clips(*net, truth, actions, positions, 2, seed);
  ASSERT_EQ(played.sizes(), truth.sizes());
  EXPECT_TRUE(played.slice(1, 0, 2).equal(truth.slice(1, 0, 2)));
  EXPECT_TRUE(played.ge(0).all().item<bool>());
  EXPECT_TRUE(played.lt(c.tokens.vocab).all().item<bool>()) << "no place is left masked";
  // The same seed plays the same clips; another seed draws other frames (random weights spread
  // their mass over the codebook, so 64 draws agreeing by chance is out of the question).
  EXPECT_TRUE(play_token_clips(*net, truth, actions, positions, 2, seed).equal(played));
  EXPECT_FALSE(play_token_clips(*net, truth, actions, positions, 2, seed + 1).equal(played));
}

// Note [Quarter tracking]: a played clip's frames carry the quarters play gives them (the seed
// frames' the game's, each drawn one's followed from the shift its tokens made), and the cached
// forward reads them as the training sequence does.
TEST(PlayTokenClips, CommitsTheQuartersItsOwnFramesFollow) {
  std::mt19937 random(std::random_device{}());
  model::ModelConfig c = token_config(10);
  c.tile_quarters = {1, 1};
  model::CausalDiT net(c);
  model::init_random_weights(net, random());
  {
    // Quarter vectors as large as the token embeddings, so reading them shows in the draws.
    const at::NoGradGuard no_grad;
    net->tile_quarters->weight.normal_(0.0, 1.0);
  }
  const int64_t b = 3, f = 6;
  at::manual_seed(random());
  const at::Tensor truth = at::randint(0, c.tokens.vocab, {b, f, 4, 4}, at::kLong);
  const at::Tensor actions = at::randint(0, 5, {b, f}, at::kLong);
  const at::Tensor positions = at::arange(f, at::kLong).repeat({b, 1});
  const at::Tensor quarters = at::randint(0, 4, {b, f}, at::kLong);
  const uint64_t seed = random();
  at::Tensor followed;
  const at::Tensor played =
      play_token_clips(*net, truth, actions, positions, 2, seed, quarters, &followed);
  ASSERT_EQ(followed.sizes(), (at::IntArrayRef{b, f}));
  EXPECT_TRUE(followed.slice(1, 0, 2).equal(quarters.slice(1, 0, 2)));
  for (int64_t i = 2; i < f; ++i) {
    const at::Tensor expected = model::follow_quarters(
        followed.select(1, i - 1), played.select(1, i - 1), played.slice(1, i, i + 1));
    EXPECT_TRUE(followed.slice(1, i, i + 1).equal(expected)) << "frame " << i;
  }
  // The play read them: without the quarters the same draws give other frames.
  EXPECT_FALSE(play_token_clips(*net, truth, actions, positions, 2, seed).equal(played));

  // Each drawn frame's first pass, through the cache committed with those quarters, equals the
  // training sequence's logits for the frame fully masked with the same context quarters.
  const at::NoGradGuard no_grad;
  CachedTokenForward cached(*net);
  for (int64_t p = 0; p < f; ++p) {
    const at::Tensor masked = at::full({b, 1, 4, 4}, c.tokens.vocab, at::kLong);
    const at::Tensor t = at::ones({b, 1});
    const at::Tensor fast =
        cached.logits(masked, t, actions.slice(1, p, p + 1), positions.slice(1, p, p + 1));
    const at::Tensor expected =
        masked_sequence_logits(net, played, masked, t, actions, positions, p, followed);
    EXPECT_TRUE(at::allclose(fast, expected, 1e-4, 1e-4)) << "frame " << p;
    cached.commit(played.slice(1, p, p + 1), actions.slice(1, p, p + 1),
                  positions.slice(1, p, p + 1), followed.slice(1, p, p + 1));
  }
  EXPECT_THROW(play_token_clips(*net, truth, actions, positions, 2, seed, quarters.slice(1, 0, 3)),
               c10::Error);
}

TEST(PlayTokenClips, RefusesSeedFramesOutsideTheClip) {
  const model::ModelConfig c = token_config(10);
  model::CausalDiT net(c);
  const at::Tensor truth = at::zeros({1, 3, 4, 4}, at::kLong);
  const at::Tensor keys = at::zeros({1, 3}, at::kLong);
  EXPECT_THROW(play_token_clips(*net, truth, keys, keys, 0, 1), c10::Error);
  EXPECT_THROW(play_token_clips(*net, truth, keys, keys, 4, 1), c10::Error);
}

// Note [Drawn context]: the chosen rows' carried places after the sink hold the model's one-pass
// draws given the game's frames before (the masked sequence, reference), everything else the
// game's tokens; the draws follow from the seed.
TEST(DrawnContext, DrawsCarriedPlacesFromTheGamesContext) {
  std::mt19937 random(std::random_device{}());
  const model::ModelConfig c = token_config(12);
  model::CausalDiT net(c);
  model::init_random_weights(net, random());
  const int64_t b = 3, f = 4;
  at::manual_seed(random());
  const at::Tensor tokens = at::randint(0, c.tokens.vocab, {b, f, 4, 4}, at::kLong);
  const at::Tensor actions = at::randint(0, 5, {b, f}, at::kLong);
  const at::Tensor positions = at::arange(f, at::kLong).repeat({b, 1});
  const at::Tensor rows = at::tensor(std::vector<int64_t>{1, 0, 1}).to(at::kBool);
  const at::Tensor carried = at::rand({b, f, 4, 4}) < 0.7;
  const uint64_t seed = random();
  const double temperature = 3.0;
  const at::Tensor drawn = drawn_context(*net, tokens, actions, positions, at::Tensor(), rows,
                                         carried, temperature, seed);
  EXPECT_TRUE(drawn.select(0, 1).equal(tokens.select(0, 1)));
  EXPECT_TRUE(drawn.slice(1, 0, 1).equal(tokens.slice(1, 0, 1)));
  EXPECT_TRUE(at::where(carried, tokens, drawn).equal(tokens));
  EXPECT_TRUE(drawn_context(*net, tokens, actions, positions, at::Tensor(), rows, carried,
                            temperature, seed)
                  .equal(drawn));
  EXPECT_FALSE(drawn_context(*net, tokens, actions, positions, at::Tensor(), rows, carried,
                             temperature, seed + 1)
                   .equal(drawn));

  // Each carried place holds the reference's draw at the same uniform: the token whose span of
  // the reference's CDF holds it (to within the two forwards' rounding). The uniforms are the
  // chosen rows' in order, frames 1.. of each, as the function takes them from its generator.
  at::Generator gen = at::detail::createCPUGenerator(seed);
  const at::Tensor uniforms = at::rand({2, f - 1, 16}, gen, at::TensorOptions().dtype(at::kFloat));
  const at::NoGradGuard no_grad;
  const int64_t chosen[] = {0, 2};
  int64_t changed = 0;
  for (int64_t k = 0; k < 2; ++k) {
    const int64_t r = chosen[k];
    const at::Tensor clip = tokens.slice(0, r, r + 1);
    for (int64_t p = 1; p < f; ++p) {
      const at::Tensor masked = at::full({1, 1, 4, 4}, c.tokens.vocab, at::kLong);
      const at::Tensor logits =
          masked_sequence_logits(net, clip, masked, at::ones({1, 1}), actions.slice(0, r, r + 1),
                                 positions.slice(0, r, r + 1), p);
      const at::Tensor cdf =
          at::softmax(logits.view({16, -1}).to(at::kDouble) / temperature, -1).cumsum(-1);
      for (int64_t i = 0; i < 16; ++i) {
        const int64_t y = i / 4, x = i % 4;
        const int64_t got = drawn[r][p][y][x].item<int64_t>();
        if (!carried[r][p][y][x].item<bool>()) {
          EXPECT_EQ(got, tokens[r][p][y][x].item<int64_t>());
          continue;
        }
        const double u = uniforms[k][p - 1][i].item<double>();
        const double below = got == 0 ? 0.0 : cdf[i][got - 1].item<double>();
        EXPECT_LE(below, u + 1e-4) << "row " << r << " frame " << p << " place " << i;
        EXPECT_GT(cdf[i][got].item<double>(), u - 1e-4)
            << "row " << r << " frame " << p << " place " << i;
        changed += got != tokens[r][p][y][x].item<int64_t>();
      }
    }
  }
  // At a high temperature over 12 tokens most draws differ from a random clip's.
  EXPECT_GT(changed, 10);
}

// The game's frames as tokens of the codebook of their distinct 8x8 patches, 128x128, and the
// camera's step into each frame (an index in kStepShifts; 0 into the first).
struct GameClip {
  at::Tensor tokens;   // [1, F, 16, 16]
  at::Tensor actions;  // [1, F]
  std::vector<int> moves;
  model::Codebook book;
};

GameClip game_clip(uint64_t seed, const std::vector<game::Action>& actions) {
  game::Game g({128, 128, seed, true});
  std::vector<std::vector<uint8_t>> frames = {g.frame()};
  GameClip out;
  out.moves.push_back(0);
  for (game::Action a : actions) {
    const int x = g.camera_x(), y = g.camera_y();
    g.step(a);
    frames.push_back(g.frame());
    const int dy = (g.camera_y() - y) / 8, dx = (g.camera_x() - x) / 8;
    int move = 0;
    for (int s = 0; s < 5; ++s) {
      if (kStepShifts[s][0] == dy && kStepShifts[s][1] == dx) move = s;
    }
    out.moves.push_back(move);
  }
  std::map<std::array<uint8_t, 3>, uint8_t> colours;
  std::map<std::vector<uint8_t>, int64_t> entries;
  out.book.patch = 8;
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
  std::vector<int64_t> keys = {0};
  for (game::Action a : actions) keys.push_back(static_cast<int64_t>(a));
  out.actions = at::tensor(keys, at::kLong).unsqueeze(0);
  return out;
}

at::Tensor game_tokens(uint64_t seed, const std::vector<game::Action>& actions) {
  return game_clip(seed, actions).tokens;
}

at::Tensor overlay_cells_128() {
  return overlay_mask(128, 128).view({16, 8, 16, 8}).any(3).any(1);
}

std::vector<game::Action> random_walk(std::mt19937& random, int frames) {
  std::vector<game::Action> walk;
  while (static_cast<int>(walk.size()) < frames) {
    const auto a = static_cast<game::Action>(random() % 5);
    for (int k = 1 + static_cast<int>(random() % 6);
         k > 0 && static_cast<int>(walk.size()) < frames; --k) {
      walk.push_back(a);
    }
  }
  return walk;
}

// Where the model's frame is the game's, the target is the game's frame, every place scored:
// the rule is the game's own.
TEST(OwnTokenTargets, AreTheGamesFramesWhenTheModelPlaysTheGame) {
  std::mt19937 random(std::random_device{}());
  for (int clip = 0; clip < 4; ++clip) {
    const at::Tensor truth = game_tokens(random() % 100000, random_walk(random, 40));
    const OwnTargets t = own_token_targets(truth, truth, step_shifts(truth), overlay_cells_128());
    EXPECT_TRUE(t.tokens.equal(truth)) << "clip " << clip;
    EXPECT_TRUE(t.scored.all().item<bool>()) << "clip " << clip;
  }
}

// The game's step applied to the model's frames `own`, written cell by cell.
void expect_own_targets(const at::Tensor& truth, const at::Tensor& own, const std::string& name) {
  const at::Tensor overlay = overlay_cells_128();
  const at::Tensor shifts = step_shifts(truth);
  const OwnTargets t = own_token_targets(truth, own, shifts, overlay);
  for (int64_t i = 2; i < truth.size(1); ++i) {
    // Whether the model's frame before shows the game's patch at a cell.
    const auto agrees = [&](int y, int x) {
      return own[0][i - 1][y][x].item<int64_t>() == truth[0][i - 1][y][x].item<int64_t>();
    };
    const int s = static_cast<int>(shifts[0][i - 1].item<int64_t>());
    const int dy = kStepShifts[s][0], dx = kStepShifts[s][1];
    const auto ground = [&](int y, int x) {
      const int sy = y + dy, sx = x + dx;
      return sy >= 0 && sy < 16 && sx >= 0 && sx < 16 && !overlay[y][x].item<bool>() &&
             !overlay[sy][sx].item<bool>();
    };
    // What the game's step made of each of its ground patches, and whether it changed any.
    std::map<int64_t, std::set<int64_t>> successors;
    bool still = true;
    for (int y = 0; y < 16; ++y) {
      for (int x = 0; x < 16; ++x) {
        if (!ground(y, x)) continue;
        const int64_t from = truth[0][i - 1][y + dy][x + dx].item<int64_t>();
        const int64_t to = truth[0][i][y][x].item<int64_t>();
        successors[from].insert(to);
        still &= from == to;
      }
    }
    for (int y = 0; y < 16; ++y) {
      for (int x = 0; x < 16; ++x) {
        const int sy = y + dy, sx = x + dx;
        const bool inside = sy >= 0 && sy < 16 && sx >= 0 && sx < 16;
        const int cy = std::clamp(sy, 0, 15), cx = std::clamp(sx, 0, 15);
        const int64_t target = t.tokens[0][i][y][x].item<int64_t>();
        const bool scored = t.scored[0][i][y][x].item<bool>();
        const std::string where = name + " frame " + std::to_string(i) + " cell " +
                                  std::to_string(y) + "," + std::to_string(x);
        if (ground(y, x) && !agrees(sy, sx)) {
          const int64_t mine = own[0][i - 1][sy][sx].item<int64_t>();
          const auto found = successors.find(mine);
          if (found != successors.end() && found->second.size() == 1) {
            EXPECT_TRUE(scored) << where;
            EXPECT_EQ(target, *found->second.begin()) << where;
          } else {
            // Kept on a still step; else unscored, showing what the model drew there.
            EXPECT_EQ(scored, still) << where;
            EXPECT_EQ(target, still ? mine : own[0][i][y][x].item<int64_t>()) << where;
          }
        } else if (ground(y, x)) {
          EXPECT_TRUE(scored) << where;
          EXPECT_EQ(target, truth[0][i][y][x].item<int64_t>()) << where;
        } else {
          EXPECT_EQ(scored, agrees(cy, cx) && (!inside || agrees(y, x))) << where;
          EXPECT_EQ(target, (scored ? truth : own)[0][i][y][x].item<int64_t>()) << where;
        }
      }
    }
  }
}

// Ground the model drew on its own moves with the game's step: a patch the game never shows is
// kept on a step that changed none of the game's ground and unscored on one that did (the
// waves drifted); a patch the game shows becomes what the game made of it. The strip beside the
// model's ground is not scored against the game's, nor the sprite and HUD over it.
TEST(OwnTokenTargets, MoveTheModelsOwnGroundWithTheGamesStep) {
  std::mt19937 random(std::random_device{}());
  for (int clip = 0; clip < 6; ++clip) {
    const at::Tensor truth = game_tokens(random() % 100000, random_walk(random, 40));
    const int64_t y0 = random() % 14, x0 = random() % 14;
    at::Tensor unseen = truth.clone();
    unseen.slice(1, 1).slice(2, y0, y0 + 3).slice(3, x0, x0 + 3).fill_(100000);
    expect_own_targets(truth, unseen, "unseen patch, clip " + std::to_string(clip));
    // The square holds, in every frame, what the game shows at one of its cells then.
    at::Tensor seen = truth.clone();
    const int64_t ry = random() % 16, rx = random() % 16;
    for (int64_t i = 1; i < truth.size(1); ++i) {
      seen[0][i]
          .slice(0, y0, y0 + 3)
          .slice(1, x0, x0 + 3)
          .fill_(truth[0][i][ry][rx].item<int64_t>());
    }
    expect_own_targets(truth, seen, "seen patch, clip " + std::to_string(clip));
  }
}

// Where the model's walls stop a step the game took, its view stands: its ground stays (or
// becomes what the game's step made of it), the strip and the overlays are unscored.
TEST(OwnTokenTargets, StandWhereTheModelsStepStands) {
  std::mt19937 random(std::random_device{}());
  const at::Tensor overlay = overlay_cells_128();
  for (int clip = 0; clip < 4; ++clip) {
    std::vector<game::Action> walk(30, static_cast<game::Action>(1 + random() % 4));
    const GameClip g = game_clip(random() % 100000, walk);
    const at::Tensor own = g.tokens.clone();
    const at::Tensor standing = at::zeros({1, g.tokens.size(1) - 1}, at::kLong);
    const OwnTargets t = own_token_targets(g.tokens, own, standing, overlay);
    const at::Tensor game_steps = step_shifts(g.tokens);
    for (int64_t i = 1; i < g.tokens.size(1); ++i) {
      if (game_steps[0][i - 1].item<int64_t>() == 0) continue;  // the game stood too
      for (int y = 0; y < 16; ++y) {
        for (int x = 0; x < 16; ++x) {
          const std::string where = "clip " + std::to_string(clip) + " frame " + std::to_string(i) +
                                    " cell " + std::to_string(y) + "," + std::to_string(x);
          if (overlay[y][x].item<bool>()) {
            EXPECT_FALSE(t.scored[0][i][y][x].item<bool>()) << where;
            continue;
          }
          // The ground stands: the model's patch, or what the game made of it.
          if (t.scored[0][i][y][x].item<bool>()) {
            const int64_t mine = own[0][i - 1][y][x].item<int64_t>();
            const int64_t target = t.tokens[0][i][y][x].item<int64_t>();
            EXPECT_TRUE(target == mine || (g.tokens[0][i] == target).any().item<bool>()) << where;
          }
        }
      }
      // Most of a standing view is scored (only wave steps leave patches the game does not
      // show unscored).
      EXPECT_GT(t.scored[0][i].to(at::kFloat).mean().item<double>(), 0.3) << "frame " << i;
    }
  }
}

// The game's rule read off the game's own frames is the game's step, every step.
TEST(OwnStepReader, ReadsTheGamesStepsOffItsFrames) {
  std::mt19937 random(std::random_device{}());
  for (int clip = 0; clip < 3; ++clip) {
    const GameClip g = game_clip(random() % 100000, random_walk(random, 60));
    const OwnStepReader reader(g.book, 128, 128);
    const at::Tensor steps = reader.steps(g.tokens, g.actions);
    ASSERT_EQ(steps.sizes(), (at::IntArrayRef{1, g.tokens.size(1) - 1}));
    for (int64_t i = 1; i < g.tokens.size(1); ++i) {
      EXPECT_EQ(steps[0][i - 1].item<int64_t>(), g.moves[static_cast<size_t>(i)])
          << "clip " << clip << " frame " << i << " key " << g.actions[0][i].item<int64_t>();
    }
  }
}

TEST(MakeTokenBatch, PlayedRowsShowAndScoreTheirOwnTargets) {
  const int64_t vocab = 20, b = 3, f = 7;
  const at::Tensor tokens = at::randint(0, vocab, {b, f, 4, 4}, at::kLong);
  const at::Tensor actions = at::zeros({b, f}, at::kLong);
  const at::Tensor positions = at::arange(f, at::kLong).repeat({b, 1});
  OwnContext own;
  own.rows = at::arange(b, at::kLong) < 1;
  own.played = own.rows;
  own.context = tokens.clone();
  own.context[0] = at::randint(0, vocab, {f, 4, 4}, at::kLong);
  own.targets = tokens.clone();
  own.targets[0] = at::randint(0, vocab, {f, 4, 4}, at::kLong);
  own.scored = at::ones({b, f, 4, 4}, at::kBool);
  own.scored[0] = at::rand({f, 4, 4}) < 0.5;
  TokenSpec spec;
  spec.noisy_frames = 3;
  spec.corrupt_share = 1.0;
  spec.max_corrupt = 0.5;
  const TokenBatch batch =
      make_token_batch(tokens, actions, positions, spec, vocab, 0.0, 5, 4, at::Tensor(), &own);
  // The played row's context is its play, never corrupted; the others' are the game's, corrupted.
  EXPECT_TRUE(batch.input.frames[0].slice(0, 0, f).equal(own.context[0]));
  EXPECT_FALSE(batch.input.frames.slice(0, 1).slice(1, 0, f).equal(tokens.slice(0, 1)));
  for (size_t k = 0; k < batch.noisy.size(); ++k) {
    const int64_t p = batch.noisy[k], row = f + static_cast<int64_t>(k);
    const at::Tensor target = own.targets.select(1, p).reshape({b, 16});
    EXPECT_TRUE(batch.targets.select(1, static_cast<int64_t>(k)).equal(target));
    const at::Tensor shown = batch.input.frames.select(1, row).reshape({b, 16});
    const at::Tensor masked = shown == vocab;
    EXPECT_TRUE(at::where(masked, target, shown).equal(target));
    const at::Tensor w = batch.weights.select(1, static_cast<int64_t>(k));
    EXPECT_TRUE(
        (w.gt(0) == (masked & own.scored.select(1, p).reshape({b, 16}))).all().item<bool>());
  }
}

// Note [Drawn context]: a row that carries the model's draws but was not played keeps its context
// from plain corruption, as a played one does, but takes overlay corruption, which a played row
// never does.
TEST(MakeTokenBatch, DrawnRowsTakeOnlyOverlayCorruption) {
  const int64_t vocab = 20, b = 3, f = 7;
  const at::Tensor tokens = at::randint(0, vocab, {b, f, 4, 4}, at::kLong);
  const at::Tensor actions = at::zeros({b, f}, at::kLong);
  const at::Tensor positions = at::arange(f, at::kLong).repeat({b, 1});
  OwnContext own;
  own.rows = at::arange(b, at::kLong) < 2;
  own.played = at::arange(b, at::kLong) < 1;
  own.context = at::randint(0, vocab, {b, f, 4, 4}, at::kLong);
  own.context[2] = tokens[2];
  own.targets = tokens.clone();
  own.scored = at::ones({b, f, 4, 4}, at::kBool);
  at::Tensor overlay = at::zeros({4, 4}, at::kBool);
  overlay[1][1] = true;
  overlay[0][3] = true;
  overlay[2][2] = true;
  overlay[3][0] = true;
  TokenSpec spec;
  spec.noisy_frames = 3;
  spec.corrupt_share = 1.0;
  spec.max_corrupt = 0.5;
  spec.overlay_corrupt_share = 1.0;
  bool game_row_corrupted = false;
  for (uint64_t seed = 1; seed <= 4; ++seed) {
    const TokenBatch batch =
        make_token_batch(tokens, actions, positions, spec, vocab, 0.0, 5, seed, overlay, &own);
    const at::Tensor context = batch.input.frames.slice(1, 0, f);
    EXPECT_TRUE(context[0].equal(own.context[0])) << "seed " << seed;
    const at::Tensor off_overlay = overlay.logical_not().expand({f, 4, 4});
    EXPECT_TRUE(
        context[1].masked_select(off_overlay).equal(own.context[1].masked_select(off_overlay)))
        << "seed " << seed;
    EXPECT_FALSE(context[1].equal(own.context[1])) << "seed " << seed;
    game_row_corrupted |=
        !context[2].masked_select(off_overlay).equal(tokens[2].masked_select(off_overlay));
  }
  EXPECT_TRUE(game_row_corrupted);
}

}  // namespace
}  // namespace wc::train
