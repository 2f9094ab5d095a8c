// Note [Masked sampling]: the pass schedule, the CDF draw against a per-place loop, one pass
// against a per-token loop (the CDF draw, the top-p cut, the confidence order), and a Session
// playing a token model: its frames are codebook patches, a seed replays them, and its
// temperature and passes change live or are refused.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <random>
#include <set>

#include <torch/autograd.h>

#include "engine/core/error.h"
#include "engine/model/dit.h"
#include "engine/model/play_settings.h"
#include "engine/model/tokenizer.h"
#include "engine/model/weights.h"
#include "engine/rollout/sampler.h"
#include "engine/rollout/session.h"
#include "engine/rollout/token_sampler.h"
#include "tests/model/model_test_util.h"

namespace wc::rollout {
namespace {

using ::testing::HasSubstr;

TEST(StayShare, FallsOnTheCosineToNoneAfterTheLastPass) {
  for (int passes = 1; passes <= 8; ++passes) {
    double before = 1.0;
    for (int k = 0; k < passes; ++k) {
      const double share = stay_share(k, passes);
      EXPECT_LT(share, before) << k << " of " << passes;
      EXPECT_GE(share, 0.0);
      before = share;
    }
    EXPECT_EQ(stay_share(passes - 1, passes), 0.0);
  }
  // 256 tokens in 3 passes, all unsure: MaskGIT's 221, 128, 0 masked after each pass.
  EXPECT_EQ(static_cast<int64_t>(256 * stay_share(0, 3)), 221);
  EXPECT_EQ(static_cast<int64_t>(256 * stay_share(1, 3)), 128);
}

TEST(TokenUniforms, AreTheNormalCdfOfTheNoiseInUnitRange) {
  const at::Tensor noise = at::randn({1, 2, 3, 8, 8});
  const at::Tensor u = token_uniforms(noise, 3, 16);
  EXPECT_EQ(u.sizes(), (at::IntArrayRef{3, 1, 2, 16}));
  EXPECT_TRUE((u >= 0).all().item<bool>());
  EXPECT_TRUE((u < 1).all().item<bool>());
  const double z = noise[0][1][0][0][5].item<double>();  // frame 1, value 5 = pass 0, token 5
  EXPECT_NEAR(u[0][0][1][5].item<double>(), 0.5 * (1 + std::erf(z / std::sqrt(2.0))), 1e-6);
}

// The pass for one frame, token by token: the reference for masked_pass.
std::vector<int64_t> pass_by_loop(const std::vector<int64_t>& tokens, const at::Tensor& logits,
                                  const at::Tensor& uniforms, int64_t mask_id, double temperature,
                                  double top_p, double sure, double share, int64_t* unsure,
                                  int64_t grid_w = 0, int64_t quarter = -1) {
  const int64_t n = static_cast<int64_t>(tokens.size()), v = logits.size(-1);
  std::vector<int64_t> drawn(tokens.size());
  std::vector<double> confidence(tokens.size());
  for (int64_t i = 0; i < n; ++i) {
    std::vector<double> p(static_cast<size_t>(v));
    double max = -1e300, sum = 0;
    for (int64_t j = 0; j < v; ++j) max = std::max(max, logits[i][j].item<double>() / temperature);
    for (int64_t j = 0; j < v; ++j)
      sum += p[static_cast<size_t>(j)] = std::exp(logits[i][j].item<double>() / temperature - max);
    for (double& x : p) x /= sum;
    std::vector<double> kept = p;
    if (top_p < 1) {
      std::vector<int64_t> order(static_cast<size_t>(v));
      for (int64_t j = 0; j < v; ++j) order[static_cast<size_t>(j)] = j;
      std::stable_sort(order.begin(), order.end(),
                       [&](int64_t a, int64_t b) { return p[a] > p[b]; });
      double before = 0;
      for (int64_t j : order) {
        if (before >= top_p) kept[static_cast<size_t>(j)] = 0;
        before += p[static_cast<size_t>(j)];
      }
    }
    double total = 0;
    for (double x : kept) total += x;
    const double target = uniforms[i].item<double>() * total;
    double cdf = 0;
    int64_t pick = v - 1;
    for (int64_t j = 0; j < v; ++j) {
      cdf += kept[static_cast<size_t>(j)];
      if (cdf > target) {
        pick = j;
        break;
      }
    }
    const bool masked = tokens[static_cast<size_t>(i)] == mask_id;
    drawn[static_cast<size_t>(i)] = masked ? pick : tokens[static_cast<size_t>(i)];
    confidence[static_cast<size_t>(i)] = masked ? *std::max_element(p.begin(), p.end()) : 2.0;
  }
  // sure = 1: no draw is sure.
  const auto is_sure = [&](size_t i) { return sure < 1 && confidence[i] >= sure; };
  int64_t masked = 0, below = 0;
  for (int64_t i = 0; i < n; ++i) {
    if (tokens[static_cast<size_t>(i)] != mask_id) continue;
    ++masked;
    if (!is_sure(static_cast<size_t>(i))) ++below;
  }
  const bool first = *unsure < 0;
  if (first) *unsure = below;
  const int64_t stay = std::min<int64_t>(static_cast<int64_t>(std::floor(*unsure * share)), masked);
  const auto candidate = [&](int64_t i) {
    return tokens[static_cast<size_t>(i)] == mask_id && !is_sure(static_cast<size_t>(i));
  };
  // Note [Tile passes]: before the last pass an unsure place may show only when no other unsure
  // masked place of its tile is surer (or as sure and lower). The tile of place (r, c) at
  // quarter q starts at the row and column where (r + q/2) and (c + q mod 2) are even.
  const bool tiled = grid_w > 0 && share > 0;
  std::vector<bool> eligible(tokens.size(), true);
  if (tiled && quarter >= 0) {
    for (int64_t i = 0; i < n; ++i) {
      if (!candidate(i)) continue;
      const int64_t row = i / grid_w, col = i % grid_w;
      const int64_t top = row - (row + quarter / 2) % 2, left = col - (col + quarter % 2) % 2;
      for (int64_t r2 = top; r2 < top + 2; ++r2) {
        for (int64_t c2 = left; c2 < left + 2; ++c2) {
          const int64_t j = r2 * grid_w + c2;
          if (j == i || r2 < 0 || r2 >= n / grid_w || c2 < 0 || c2 >= grid_w || !candidate(j))
            continue;
          const double cj = confidence[static_cast<size_t>(j)],
                       ci = confidence[static_cast<size_t>(i)];
          if (cj > ci || (cj == ci && j < i)) eligible[static_cast<size_t>(i)] = false;
        }
      }
    }
  }
  std::vector<int64_t> out(tokens.size(), mask_id);
  if (tiled && !first) {
    // A later pass before the last shows every eligible place.
    for (int64_t i = 0; i < n; ++i) {
      const size_t at = static_cast<size_t>(i);
      if (tokens[at] != mask_id || is_sure(at) || (candidate(i) && eligible[at]))
        out[at] = drawn[at];
    }
    return out;
  }
  // The schedule's count goes to the eligible places first (stable by confidence within each).
  std::vector<int64_t> order(tokens.size());
  for (int64_t i = 0; i < n; ++i) order[static_cast<size_t>(i)] = i;
  const auto key = [&](int64_t i) {
    return tiled && candidate(i) && !eligible[static_cast<size_t>(i)] ? confidence[i] - 3.0
                                                                      : confidence[i];
  };
  std::stable_sort(order.begin(), order.end(),
                   [&](int64_t a, int64_t b) { return key(a) > key(b); });
  for (int64_t r = 0; r < n; ++r) {
    const size_t i = static_cast<size_t>(order[static_cast<size_t>(r)]);
    const bool may = !tiled || !candidate(static_cast<int64_t>(i)) || eligible[i];
    if ((r < n - stay && may) || is_sure(i)) out[i] = drawn[i];
  }
  return out;
}

// Fast path against reference: each place's draw is the first token whose cumulative
// probability at the temperature passes the place's uniform, found one place at a time.
TEST(DrawByCdf, InvertsEachPlacesCdf) {
  std::mt19937 random(std::random_device{}());
  at::manual_seed(random());
  const at::Tensor logits = at::randn({3, 5, 7}) * 3.0;
  const at::Tensor uniforms = at::rand({3, 5});
  for (const double temperature : {0.5, 1.0, 2.0}) {
    const at::Tensor drawn = draw_by_cdf(at::softmax(logits / temperature, -1), uniforms);
    ASSERT_EQ(drawn.sizes(), (std::vector<int64_t>{3, 5}));
    const at::Tensor probs = at::softmax(logits.to(at::kDouble) / temperature, -1);
    for (int64_t i = 0; i < 3; ++i) {
      for (int64_t j = 0; j < 5; ++j) {
        const double u = uniforms[i][j].item<double>();
        double sum = 0.0;
        int64_t expected = 6;
        for (int64_t v = 0; v < 7; ++v) {
          sum += probs[i][j][v].item<double>();
          if (sum > u) {
            expected = v;
            break;
          }
        }
        EXPECT_EQ(drawn[i][j].item<int64_t>(), expected) << i << "," << j << " at " << temperature;
      }
    }
  }
  // A sure place draws its token whatever the uniform.
  const at::Tensor sure =
      at::full({1, 4, 7}, -30.0).index_fill_(-1, at::tensor(std::vector<int64_t>{3}), 30.0);
  const at::Tensor spread =
      at::tensor(std::vector<float>{0.001f, 0.3f, 0.7f, 0.9999f}).view({1, 4});
  EXPECT_TRUE(draw_by_cdf(at::softmax(sure, -1), spread).eq(3).all().item<bool>());
}

TEST(MaskedPass, MatchesAPerTokenLoop) {
  std::mt19937 random(std::random_device{}());
  for (int trial = 0; trial < 16; ++trial) {
    const int64_t n = 24, v = 9, mask_id = v;
    // Note [Tile passes] in rows of 6, at each of the four grid phases and one unknown.
    const int64_t grid_w = trial >= 6 ? 6 : 0;
    const int64_t quarter = trial >= 6 ? trial % 5 - 1 : -1;
    // Peaked logits give some draws above `sure`.
    const at::Tensor logits = at::randn({1, 1, n, v}) * (trial % 4 < 2 ? 2.0 : 5.0);
    std::vector<int64_t> tokens(static_cast<size_t>(n), mask_id);
    const double temperature = trial % 2 ? 0.7 : 1.0;
    const double top_p = trial >= 4 ? 0.8 : 1.0;
    const double sure = trial % 3 == 0 ? 1.0 : 0.6;
    const int passes = 2 + trial % 3;
    // A frame through every pass, with fresh uniforms each pass; the first pass counts the
    // unsure draws the later ones take.
    int64_t unsure_loop = -1;
    at::Tensor unsure;
    for (int k = 0; k < passes; ++k) {
      const at::Tensor uniforms = at::rand({1, 1, n});
      const at::Tensor in = at::tensor(tokens, at::kLong).view({1, 1, n});
      PassTiles tiles;
      if (grid_w > 0) tiles = {at::full({1, 1}, quarter, at::kLong), grid_w};
      const MaskedPass out = masked_pass(in, logits, uniforms, mask_id, temperature, top_p, sure,
                                         stay_share(k, passes), unsure, tiles);
      const std::vector<int64_t> expected =
          pass_by_loop(tokens, logits[0][0], uniforms[0][0], mask_id, temperature, top_p, sure,
                       stay_share(k, passes), &unsure_loop, grid_w, quarter);
      unsure = out.unsure;
      EXPECT_EQ(out.unsure.item<int64_t>(), unsure_loop) << "trial " << trial << " pass " << k;
      for (int64_t i = 0; i < n; ++i) {
        ASSERT_EQ(out.tokens[0][0][i].item<int64_t>(), expected[static_cast<size_t>(i)])
            << "trial " << trial << " pass " << k << " token " << i;
      }
      // Shown tokens stay shown.
      for (size_t i = 0; i < tokens.size(); ++i) {
        if (tokens[i] != mask_id) {
          EXPECT_EQ(expected[i], tokens[i]);
        }
      }
      tokens = expected;
    }
    EXPECT_EQ(std::count(tokens.begin(), tokens.end(), mask_id), 0) << "trial " << trial;
  }
}

TEST(MaskedPass, ShowsSureDrawsFirstAndSpreadsTheUnsureOverThePasses) {
  // 16 places: 12 all but certain (one token of mass ≈ 0.999), 4 even over the 9 tokens.
  const int64_t n = 16, v = 9, mask_id = v;
  at::Tensor logits = at::zeros({1, 1, n, v});
  logits.slice(2, 0, 12).select(-1, 3).fill_(16.0);
  at::Tensor tokens = at::full({1, 1, n}, mask_id, at::kLong);
  MaskedPass pass = masked_pass(tokens, logits, at::rand({1, 1, n}), mask_id, 1.0, 1.0, 0.9,
                                stay_share(0, 3), at::Tensor());
  EXPECT_EQ(pass.unsure.item<int64_t>(), 4);
  // The 12 sure ones show; of the 4 unsure, floor(4·cos(30°)) = 3 stay masked.
  EXPECT_TRUE((pass.tokens.slice(2, 0, 12) == 3).all().item<bool>());
  EXPECT_EQ((pass.tokens == mask_id).sum().item<int64_t>(), 3);
  pass = masked_pass(pass.tokens, logits, at::rand({1, 1, n}), mask_id, 1.0, 1.0, 0.9,
                     stay_share(1, 3), pass.unsure);
  EXPECT_EQ((pass.tokens == mask_id).sum().item<int64_t>(), 2);  // floor(4·cos(60°))
  pass = masked_pass(pass.tokens, logits, at::rand({1, 1, n}), mask_id, 1.0, 1.0, 0.9,
                     stay_share(2, 3), pass.unsure);
  EXPECT_EQ((pass.tokens == mask_id).sum().item<int64_t>(), 0);
  // With sure = 1 the first pass keeps MaskGIT's count: floor(16·cos(30°)) = 13 masked.
  pass = masked_pass(tokens, logits, at::rand({1, 1, n}), mask_id, 1.0, 1.0, 1.0, stay_share(0, 3),
                     at::Tensor());
  EXPECT_EQ((pass.tokens == mask_id).sum().item<int64_t>(), 13);
}

// Note [Tile tokens]: a place drawn first shows in the pass that draws it, however unsure.
TEST(MaskedPass, PlacesDrawnFirstShowInTheFirstPass) {
  const int64_t n = 16, v = 9, mask_id = v;
  const at::Tensor logits = at::zeros({1, 1, n, v});  // every place even over the 9 tokens
  const at::Tensor tokens = at::full({1, 1, n}, mask_id, at::kLong);
  at::Tensor first = at::zeros({n}, at::kBool);
  first[15] = true;
  const at::Tensor u = at::rand({1, 1, n});
  const MaskedPass pass = masked_pass(tokens, logits, u, mask_id, 1.0, 1.0, 0.9, stay_share(0, 3),
                                      at::Tensor(), {}, first);
  EXPECT_NE(pass.tokens[0][0][15].item<int64_t>(), mask_id);
  // The others keep their count: 15 unsure, floor(15·cos(30°)) = 12 stay masked.
  EXPECT_EQ(pass.unsure.item<int64_t>(), 15);
  EXPECT_EQ((pass.tokens == mask_id).sum().item<int64_t>(), 12);
  // Without it the last place, tied with the rest, goes after the lower ones.
  const MaskedPass plain =
      masked_pass(tokens, logits, u, mask_id, 1.0, 1.0, 0.9, stay_share(0, 3), at::Tensor());
  EXPECT_EQ(plain.tokens[0][0][15].item<int64_t>(), mask_id);
}

// Note [Tile passes]: a column that scrolled in holds the halves of 8 tiles, two unsure quarters
// each. Before the last pass no two of one tile show together, so with three passes the first
// quarters of the tiles show in the first two passes and each second one after its first.
TEST(MaskedPass, TilePassesShowOneUnsureQuarterOfATileAtATime) {
  std::mt19937 random(std::random_device{}());
  at::manual_seed(random());
  const int64_t h = 16, w = 16, n = h * w, v = 7, mask_id = v;
  for (const int64_t quarter : {0, 1, 2, 3}) {
    // The last column is unsure (even logits with noise), the rest sure.
    at::Tensor logits = at::randn({1, 1, n, v}) * 0.3;
    logits.view({1, 1, h, w, v}).slice(3, 0, w - 1).select(-1, 2).add_(20.0);
    const int64_t first_row = quarter / 2;  // the top row of the column's first whole tile
    at::Tensor tokens = at::full({1, 1, n}, mask_id, at::kLong);
    at::Tensor unsure;
    std::vector<int> shown_in(static_cast<size_t>(h), -1);
    for (int k = 0; k < 3; ++k) {
      const at::Tensor before = tokens.clone();
      MaskedPass pass =
          masked_pass(tokens, logits, at::rand({1, 1, n}), mask_id, 1.0, 1.0, 0.9, stay_share(k, 3),
                      unsure, PassTiles{at::full({1, 1}, quarter, at::kLong), w});
      tokens = pass.tokens;
      unsure = pass.unsure;
      if (k == 0) {
        EXPECT_EQ(unsure.item<int64_t>(), h);
        EXPECT_TRUE((tokens.view({h, w}).slice(1, 0, w - 1) == 2).all().item<bool>());
      }
      const at::Tensor newly = ((before == mask_id) & (tokens != mask_id)).view({h, w});
      for (int64_t r = 0; r < h; ++r) {
        if (newly[r][w - 1].item<bool>()) shown_in[static_cast<size_t>(r)] = k;
      }
    }
    EXPECT_EQ((tokens == mask_id).sum().item<int64_t>(), 0);
    // Rows (first_row + 2i, first_row + 2i + 1) are one tile's; a row at the frame's edge whose
    // tile hangs over it is alone.
    for (int64_t top = first_row - 2; top < h; top += 2) {
      if (top < 0 || top + 1 >= h) continue;
      const int a = shown_in[static_cast<size_t>(top)], b = shown_in[static_cast<size_t>(top + 1)];
      EXPECT_NE(a, b) << "quarter " << quarter << ": rows " << top << " and " << top + 1
                      << " of one tile shown in one pass";
      EXPECT_LT(std::min(a, b), 2) << "quarter " << quarter << " rows " << top;
    }
    // The second pass shows every tile's first quarter still masked: none is left with both.
    EXPECT_LE(std::count(shown_in.begin(), shown_in.end(), 2), h / 2);
  }
}

TEST(MaskedPass, DrawsFromTheDistributionNotItsMode) {
  // One likely token (p ≈ 0.6) and the rest: the draws over many uniforms keep the others.
  const int64_t n = 4000, v = 5;
  at::Tensor logits = at::zeros({1, 1, n, v});
  logits.select(-1, 0).fill_(std::log(6.0));  // p0 = 6/10, the others 1/10 each
  const at::Tensor out = masked_pass(at::full({1, 1, n}, v, at::kLong), logits, at::rand({1, 1, n}),
                                     v, 1.0, 1.0, 1.0, 0.0, at::Tensor())
                             .tokens;
  const double share = (out == 0).to(at::kFloat).mean().item<double>();
  EXPECT_NEAR(share, 0.6, 0.04);
}

TEST(MaskedPass, KeepsEveryPlacesDistributionThroughThePasses) {
  // Every place: grass (token 0) at 0.7, a tree (token 1) at 0.3. Which places a pass shows
  // must not depend on what was drawn there, or the trees drawn early go back to be drawn again
  // and the frame drifts to grass.
  const int64_t n = 6000, v = 2, mask_id = v;
  at::Tensor logits = at::zeros({1, 1, n, v});
  logits.select(-1, 0).fill_(std::log(0.7));
  logits.select(-1, 1).fill_(std::log(0.3));
  for (double sure : {1.0, 0.5}) {
    at::Tensor tokens = at::full({1, 1, n}, mask_id, at::kLong);
    at::Tensor unsure;
    for (int k = 0; k < 3; ++k) {
      MaskedPass pass = masked_pass(tokens, logits, at::rand({1, 1, n}), mask_id, 1.0, 1.0, sure,
                                    stay_share(k, 3), unsure);
      tokens = pass.tokens;
      unsure = pass.unsure;
    }
    ASSERT_EQ((tokens == mask_id).sum().item<int64_t>(), 0);
    EXPECT_NEAR((tokens == 0).to(at::kFloat).mean().item<double>(), 0.7, 0.025) << "sure " << sure;
  }
}

std::vector<uint8_t> play(Session& s, int frames) {
  std::vector<uint8_t> out;
  for (int i = 0; i < frames; ++i) {
    s.step(static_cast<game::Action>(i % 5));
    out.insert(out.end(), s.rgba(), s.rgba() + s.width() * s.height() * 4);
  }
  return out;
}

TEST(TokenSession, DrawsCodebookPatchesAndReplaysFromItsSeed) {
  const model::ModelConfig c = testing::tiny_token_config();
  auto a = Session::create(c, "", "dense", {{"window", 4}}, 7, at::kCPU);
  auto b = Session::create(c, "", "dense", {{"window", 4}}, 7, at::kCPU);
  EXPECT_EQ(a->play_settings(), (nlohmann::json{{"temperature", c.tokens.temperature},
                                                {"top_p", 1.0},
                                                {"passes", 3},
                                                {"sure", c.tokens.sure}}));
  const std::vector<uint8_t> frames = play(*a, 5);
  EXPECT_EQ(frames, play(*b, 5));
  // Every patch of every frame is a codebook entry.
  const model::Tokenizer tokenizer(*c.tokens.codebook, at::kCPU);
  at::Tensor misses;
  tokenizer.encode(a->last_block().unsqueeze(0), &misses);
  EXPECT_EQ(misses.item<int64_t>(), 0);
  // Another seed draws other frames.
  auto other = Session::create(c, "", "dense", {{"window", 4}}, 8, at::kCPU);
  EXPECT_NE(play(*other, 5), frames);
}

// Note [Tile passes] in play: a session that draws with them follows the frame's tracked grid,
// replays from its seed, draws only codebook patches, and draws other frames than one without.
TEST(TokenSession, TilePassesReplayFromTheSeedAndChangeWhatIsDrawn) {
  model::ModelConfig plain = testing::tiny_token_config();
  plain.tile_quarters = {1, 1};
  plain.tokens.drawn_quarters = true;
  model::ModelConfig tiled = plain;
  tiled.tokens.tile_passes = true;
  auto a = Session::create(tiled, "", "dense", {{"window", 4}}, 7, at::kCPU);
  auto b = Session::create(tiled, "", "dense", {{"window", 4}}, 7, at::kCPU);
  auto without = Session::create(plain, "", "dense", {{"window", 4}}, 7, at::kCPU);
  const std::vector<uint8_t> frames = play(*a, 6);
  EXPECT_EQ(frames, play(*b, 6));
  EXPECT_NE(frames, play(*without, 6));
  const model::Tokenizer tokenizer(*tiled.tokens.codebook, at::kCPU);
  at::Tensor misses;
  tokenizer.encode(a->last_block().unsqueeze(0), &misses);
  EXPECT_EQ(misses.item<int64_t>(), 0);
}

// Note [Play settings]: set live, they draw what a session started with them draws; a bad one
// is refused naming its key and changes nothing, not even the good keys beside it.
TEST(TokenSession, PlaySettingsChangeLiveOrAreRefused) {
  model::ModelConfig cold = testing::tiny_token_config();
  cold.tokens.temperature = 0.2;
  cold.tokens.passes = 2;
  cold.tokens.top_p = 0.9;
  // Over 40 tokens every place is at least 1/40 sure: sureness 0.02 shows all in the first pass.
  cold.tokens.sure = 0.02;
  auto live =
      Session::create(testing::tiny_token_config(), "", "headcast", {{"window", 4}}, 9, at::kCPU);
  auto chosen = Session::create(cold, "", "headcast", {{"window", 4}}, 9, at::kCPU);
  EXPECT_EQ(live->play_settings().at("sure"), 1.0);
  live->configure_play({{"temperature", 0.2}, {"passes", 2}});
  live->configure_play({{"sure", 0.02}, {"top_p", 0.9}});
  EXPECT_EQ(live->play_settings(), chosen->play_settings());
  EXPECT_EQ(play(*live, 4), play(*chosen, 4));
  // Showing every place at once draws other frames than spreading them over the passes.
  model::ModelConfig at_once = testing::tiny_token_config();
  at_once.tokens.sure = 0.02;
  auto spread =
      Session::create(testing::tiny_token_config(), "", "dense", {{"window", 4}}, 9, at::kCPU);
  auto once = Session::create(at_once, "", "dense", {{"window", 4}}, 9, at::kCPU);
  EXPECT_NE(play(*spread, 4), play(*once, 4));
  const nlohmann::json before = live->play_settings();
  const std::vector<std::pair<nlohmann::json, std::string>> bad = {
      {{{"sure", 0.0}}, "'sure': must be in"},
      {{{"sure", 1.5}}, "'sure': must be in"},
      {{{"passes", 0}}, "'passes': must be in"},
      {{{"passes", 2.5}}, "'passes': expected an integer"},
      {{{"temperature", 0.0}}, "'temperature': must be in"},
      {{{"top_p", "all"}}, "'top_p': expected a number"},
      {{{"temprature", 0.5}}, "'temprature': not a play setting"},
      {{{"passes", 4}, {"temperature", -1.0}}, "'temperature'"},
      {nlohmann::json::array(), "a JSON object"},
  };
  for (const auto& [settings, message] : bad) {
    try {
      live->configure_play(settings);
      ADD_FAILURE() << settings.dump() << " accepted";
    } catch (const Error& e) {
      EXPECT_THAT(e.what(), HasSubstr(message)) << settings.dump();
    }
    EXPECT_EQ(live->play_settings(), before) << settings.dump();
  }
  // A pixel model has none.
  auto pixel = Session::create(testing::tiny_config(), "", "dense", {{"window", 4}}, 9, at::kCPU);
  EXPECT_EQ(pixel->play_settings(), nlohmann::json::object());
  pixel->configure_play(nlohmann::json::object());
  EXPECT_THROW(pixel->configure_play({{"passes", 2}}), Error);
}

// The sampler's play settings are the token config's until configured.
TEST(TokenSampler, ItsPlaySettingsAreTheTokenConfigs) {
  model::ModelConfig c = testing::tiny_token_config();
  c.tokens.temperature = 0.75;
  model::CausalDiT dit(c);
  testing::FullHistoryPolicy policy(testing::shape_for(c, c.frame));
  BlockSampler blocks(*dit, policy, c.frame, /*cuda_graphs=*/false);
  EXPECT_EQ(blocks.play_settings(), model::play_values(c.tokens));
  EXPECT_EQ(blocks.play_settings().at("temperature"), 0.75);
  blocks.configure_play({{"temperature", 0.25}});
  EXPECT_EQ(blocks.play_settings().at("temperature"), 0.25);
  EXPECT_THROW(blocks.configure_play({{"temperature", 0.0}}), Error);
  EXPECT_EQ(blocks.play_settings().at("temperature"), 0.25);
}

// Note [Quarter tracking]: the sink frame commits at the config's quarter, and each frame after
// it at the one before moved by the shift its tokens made, a view walked over a world of random
// tokens standing for the model's drawing.
TEST(TileQuarterTracking, CommittedFramesFollowTheirScroll) {
  model::ModelConfig c = testing::tiny_token_config();
  c.tile_quarters = {1, 1};
  model::CausalDiT dit(c);
  model::init_random_weights(dit, 3);
  const torch::NoGradGuard no_grad;
  testing::FullHistoryPolicy policy(testing::shape_for(c, c.frame));
  BlockSampler blocks(*dit, policy, c.frame, /*cuda_graphs=*/false);
  const model::Tokenizer tokenizer(*c.tokens.codebook, at::kCPU);
  const int g = c.frame.height / c.patch_h;
  at::manual_seed(12);  // fresh random inputs
  const at::Tensor world = at::randint(0, c.tokens.vocab, {20, 20}, at::kLong);
  const auto frame = [&](int y, int x) {
    return tokenizer.decode(world.slice(0, y, y + g).slice(1, x, x + g).reshape({1, 1, g, g}),
                            at::kFloat);
  };
  const at::Tensor none = at::zeros({1, 1}, at::kLong);
  int y = 7, x = 9;  // quarter (1, 1): the config's for the sink
  blocks.commit(frame(y, x), none, 0, 0, at::Tensor());
  ASSERT_TRUE(blocks.committed_quarters().defined());
  EXPECT_EQ(blocks.committed_quarters().item<int64_t>(), 3);
  const int moves[][2] = {{0, 1}, {0, 1}, {0, 0}, {1, 0}, {0, -1}, {-1, 0}, {0, 1}, {1, 0}};
  int64_t index = 1;
  for (const auto& m : moves) {
    y += m[0];
    x += m[1];
    blocks.commit(frame(y, x), none, index, index, at::Tensor());
    EXPECT_EQ(blocks.committed_quarters().item<int64_t>(), (y % 2) * 2 + x % 2)
        << "frame " << index;
    ++index;
  }
  // Given quarters (a kept block's re-commit) are taken as they are, and followed on.
  blocks.commit(frame(y, x), none, index, index, at::Tensor(), at::full({1, 1}, 1, at::kLong));
  EXPECT_EQ(blocks.committed_quarters().item<int64_t>(), 1);
  blocks.commit(frame(y, x + 1), none, index + 1, index + 1, at::Tensor());
  EXPECT_EQ(blocks.committed_quarters().item<int64_t>(), 0);
  // A frame after the sink with nothing before it cannot be followed.
  testing::FullHistoryPolicy fresh(testing::shape_for(c, c.frame));
  BlockSampler late(*dit, fresh, c.frame, /*cuda_graphs=*/false);
  try {
    late.commit(frame(y, x), none, 0, 5, at::Tensor());
    ADD_FAILURE() << "a frame committed with no quarters before it";
  } catch (const Error& e) {
    EXPECT_THAT(e.what(), HasSubstr("tile quarters"));
  }
  // A model without quarters tracks none.
  model::CausalDiT plain(testing::tiny_token_config());
  testing::FullHistoryPolicy plain_policy(testing::shape_for(c, c.frame));
  BlockSampler untracked(*plain, plain_policy, c.frame, /*cuda_graphs=*/false);
  untracked.commit(frame(y, x), none, 0, 0, at::Tensor());
  EXPECT_FALSE(untracked.committed_quarters().defined());
}

// A token model with tile quarters plays, replays from its seed, and a switch to the same policy
// re-commits the kept frames at their own quarters: the next frames are the ones without the
// switch (Note [Policy switch]).
TEST(TileQuarterTracking, ASwitchKeepsEachKeptFramesQuarters) {
  model::ModelConfig c = testing::tiny_token_config();
  c.tile_quarters = {1, 1};
  SessionOptions options;
  options.context_blocks = 6;
  const nlohmann::json settings = {{"window", 7}};
  auto a = Session::create(c, "", "dense", settings, 7, at::kCPU, options);
  auto b = Session::create(c, "", "dense", settings, 7, at::kCPU, options);
  const std::vector<uint8_t> first = play(*a, 4);
  EXPECT_EQ(first, play(*b, 4));
  a->switch_policy("dense", settings);
  EXPECT_EQ(play(*a, 5), play(*b, 5));
}

}  // namespace
}  // namespace wc::rollout
