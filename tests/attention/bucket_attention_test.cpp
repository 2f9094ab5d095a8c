// AnnSA (Note [AnnSA tiles]) on the CPU in float32: the Hamming ball, the tile rule against a
// per-query ball, the block-sparse path against the masked reference on fresh random inputs (odd
// tile and block remainders, empty slots, a key bias), one bucket == dense, recall on planted
// clusters, and the annsa / fast-ar policies against dense / tempcache with every bucket probed.
#include <ATen/CPUGeneratorImpl.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <bitset>
#include <cstdio>
#include <vector>

#include "engine/attention/ann/annsa_policy.h"
#include "engine/attention/ann/bucket_attention.h"
#include "engine/attention/registry.h"
#include "engine/attention/sdpa.h"
#include "engine/attention/tempcache/temp_cache_match.h"
#include "engine/core/error.h"
#include "tests/attention/attention_reference.h"

namespace wc::attention {
namespace {

using testing::fresh_seed;
using testing::max_abs_diff;
using testing::random_qkv;
using testing::seed_trace;
using testing::step_info;

at::Tensor randn(const std::vector<int64_t>& sizes, at::Generator& gen) {
  return at::randn(sizes, gen, at::TensorOptions().dtype(at::kFloat));
}

// Random history and queries whose buckets come from seeded projections, as the policies hash.
BucketAttentionInputs random_inputs(at::Generator& gen, int64_t rows, int64_t tq, int64_t n,
                                    int64_t t, int bits, int radius, int64_t tile, int64_t block,
                                    bool with_bias, double empty_share) {
  const int64_t d = 16;
  BucketAttentionInputs in;
  in.q = randn({rows, tq, d}, gen);
  in.keys = randn({rows, n, d}, gen);
  in.values = randn({rows, n, d}, gen);
  in.current_keys = randn({rows, t, d}, gen);
  in.current_values = randn({rows, t, d}, gen);
  const at::Tensor projections = lsh_projections(rows, d, bits, 11, at::kCPU);
  in.q_codes = lsh_codes(in.q, projections);
  in.key_codes = lsh_codes(in.keys, projections);
  if (empty_share > 0.0) {
    const at::Tensor empty = at::rand({rows, n}, gen).lt(empty_share);
    in.key_codes =
        at::where(empty, at::full({}, int64_t{-1}, in.key_codes.options()), in.key_codes);
  }
  if (with_bias) in.key_bias = at::rand({rows, n}, gen) * 2.0;
  in.bits = bits;
  in.radius = radius;
  in.tile = tile;
  in.block = block;
  return in;
}

TEST(BucketAttention, HammingBallIsPopcount) {
  for (int bits : {1, 3, 6}) {
    for (int radius : {0, 1, 2}) {
      const at::Tensor ball = hamming_ball(bits, radius, at::kCPU);
      const int64_t n = int64_t{1} << bits;
      ASSERT_EQ(ball.sizes(), (std::vector<int64_t>{n, n}));
      for (int64_t i = 0; i < n; ++i) {
        for (int64_t j = 0; j < n; ++j) {
          const auto distance = std::bitset<16>(static_cast<uint64_t>(i ^ j)).count();
          EXPECT_EQ(ball[i][j].item<bool>(), static_cast<int>(distance) <= radius)
              << bits << " bits, radius " << radius << ", " << i << " vs " << j;
        }
      }
    }
  }
}

TEST(BucketAttention, TileRuleNeverDropsAKeyOfTheQuerysOwnBall) {
  const uint64_t seed = fresh_seed();
  SCOPED_TRACE(seed_trace(seed));
  at::Generator gen = at::make_generator<at::CPUGeneratorImpl>(seed);
  const BucketAttentionInputs in = random_inputs(gen, 3, 70, 90, 8, 4, 1, 16, 16, false, 0.1);
  const at::Tensor mask = bucket_mask(in);
  const at::Tensor ball = hamming_ball(in.bits, in.radius, at::kCPU);
  int64_t wider = 0;
  for (int64_t r = 0; r < 3; ++r) {
    for (int64_t i = 0; i < 70; ++i) {
      const int64_t qc = in.q_codes[r][i].item<int64_t>();
      for (int64_t j = 0; j < 90; ++j) {
        const int64_t kc = in.key_codes[r][j].item<int64_t>();
        const bool own = kc >= 0 && ball[qc][kc].item<bool>();
        const bool allowed = mask[r][i][j].item<bool>();
        ASSERT_TRUE(!own || allowed) << "row " << r << " query " << i << " key " << j;
        ASSERT_TRUE(kc >= 0 || !allowed) << "an empty slot is attended";
        wider += allowed && !own;
      }
    }
  }
  // The tile's union adds some keys, but far from all of them.
  EXPECT_LT(wider, 3 * 70 * 90 / 2);
}

TEST(BucketAttention, BlockSparseEqualsMaskedReference) {
  const uint64_t seed = fresh_seed();
  SCOPED_TRACE(seed_trace(seed));
  at::Generator gen = at::make_generator<at::CPUGeneratorImpl>(seed);
  struct Case {
    int64_t rows, tq, n, t;
    int bits, radius;
    int64_t tile, block;
    bool bias;
    double empty;
  };
  for (const Case& c : {Case{2, 64, 200, 64, 4, 1, 16, 16, false, 0.0},
                        Case{3, 37, 131, 37, 6, 1, 16, 32, true, 0.2},
                        Case{1, 50, 64, 10, 3, 0, 128, 16, true, 0.0},
                        Case{2, 20, 300, 20, 5, 2, 32, 64, false, 0.5}}) {
    const BucketAttentionInputs in = random_inputs(gen, c.rows, c.tq, c.n, c.t, c.bits, c.radius,
                                                   c.tile, c.block, c.bias, c.empty);
    BucketAttentionCounts counts = BucketAttentionCounts::zeros(at::kCPU);
    const at::Tensor fast = bucket_attention(in, &counts);
    const at::Tensor reference = bucket_attention_reference(in);
    EXPECT_LT(max_abs_diff(fast, reference), 2e-5) << c.bits << " bits, radius " << c.radius;
    // The counts: the allowed pairs are the mask's, the history's the non-empty keys'.
    const at::Tensor mask = bucket_mask(in);
    EXPECT_NEAR(counts.allowed_pairs.item<double>(), mask.sum().item<double>(), 0.5);
    EXPECT_NEAR(counts.history_pairs.item<double>(),
                static_cast<double>(c.tq) * in.key_codes.ge(0).sum().item<double>(), 0.5);
    EXPECT_GE(counts.gathered_pairs.item<double>(), counts.allowed_pairs.item<double>());
  }
}

TEST(BucketAttention, EveryBucketProbedEqualsDense) {
  const uint64_t seed = fresh_seed();
  SCOPED_TRACE(seed_trace(seed));
  at::Generator gen = at::make_generator<at::CPUGeneratorImpl>(seed);
  const BucketAttentionInputs in = random_inputs(gen, 2, 48, 160, 48, 4, 4, 16, 32, false, 0.0);
  const at::Tensor dense = reference_attention(in.q, at::cat({in.keys, in.current_keys}, 1),
                                               at::cat({in.values, in.current_values}, 1));
  EXPECT_LT(max_abs_diff(bucket_attention(in), dense), 2e-5);
  EXPECT_TRUE(bucket_mask(in).all().item<bool>());
}

TEST(BucketAttention, NoHistoryIsTheCurrentBlockAlone) {
  at::Generator gen = at::make_generator<at::CPUGeneratorImpl>(fresh_seed());
  BucketAttentionInputs in = random_inputs(gen, 2, 16, 0, 16, 4, 1, 16, 16, false, 0.0);
  EXPECT_LT(max_abs_diff(bucket_attention(in),
                         reference_attention(in.q, in.current_keys, in.current_values)),
            2e-5);
  // Every slot empty: the same.
  in = random_inputs(gen, 2, 16, 40, 16, 4, 1, 16, 16, false, 0.0);
  in.key_codes.fill_(-1);
  EXPECT_LT(max_abs_diff(bucket_attention(in),
                         reference_attention(in.q, in.current_keys, in.current_values)),
            2e-5);
}

TEST(BucketAttention, PlantedClustersKeepTheTopKeys) {
  // Keys and queries around 16 directions: a query's true top-16 keys lie in its own cluster,
  // which the buckets should keep while dropping most of the others.
  const uint64_t seed = fresh_seed();
  SCOPED_TRACE(seed_trace(seed));
  at::Generator gen = at::make_generator<at::CPUGeneratorImpl>(seed);
  const int64_t rows = 2, d = 32, clusters = 16, n = 2048, tq = 256, top = 16;
  const at::Tensor centres = randn({rows, clusters, d}, gen);
  const auto around = [&](int64_t count, double noise) {
    const at::Tensor which = at::randint(clusters, {rows, count}, gen, at::kLong);
    return centres.gather(1, which.unsqueeze(-1).expand({rows, count, d})) +
           randn({rows, count, d}, gen) * noise;
  };
  BucketAttentionInputs in;
  in.q = around(tq, 0.2) * 2.0;
  in.keys = around(n, 0.2);
  in.values = randn({rows, n, d}, gen);
  in.current_keys = around(16, 0.2);
  in.current_values = randn({rows, 16, d}, gen);
  in.bits = 6;
  in.radius = 1;
  in.tile = 16;
  in.block = 64;
  const at::Tensor projections = lsh_projections(rows, d, in.bits, 5, at::kCPU);
  in.q_codes = lsh_codes(in.q, projections);
  in.key_codes = lsh_codes(in.keys, projections);
  const at::Tensor mask = bucket_mask(in);
  const at::Tensor best = std::get<1>(at::matmul(in.q, in.keys.transpose(1, 2)).topk(top, -1));
  const double recall = mask.gather(2, best).to(at::kFloat).mean().item<double>();
  const double kept = mask.to(at::kFloat).mean().item<double>();
  const at::Tensor dense = reference_attention(in.q, at::cat({in.keys, in.current_keys}, 1),
                                               at::cat({in.values, in.current_values}, 1));
  const at::Tensor sparse = bucket_attention(in);
  const auto relative = [&](const at::Tensor& x) {
    return (x - dense).norm().item<double>() / dense.norm().item<double>();
  };
  // The same share of the history kept at random, for scale.
  const at::Tensor random_mask =
      at::cat({at::rand({rows, tq, n}, gen).lt(kept), at::ones({rows, tq, 16}, at::kBool)}, 2);
  const double error = relative(sparse);
  const double random_error =
      relative(reference_attention(in.q, at::cat({in.keys, in.current_keys}, 1),
                                   at::cat({in.values, in.current_values}, 1), random_mask));
  std::printf(
      "planted clusters: top-%lld recall %.3f, history kept %.3f, relative error %.3f "
      "(%.3f keeping as many keys at random)\n",
      static_cast<long long>(top), recall, kept, error, random_error);
  EXPECT_GE(recall, 0.85);
  EXPECT_LE(kept, 0.6);
  EXPECT_LT(error, 0.5 * random_error);
}

ModelShape policy_shape() {
  ModelShape shape;
  shape.num_layers = 2;
  shape.num_heads = 3;
  shape.head_dim = 16;
  shape.batch = 2;
  shape.geometry = BlockGeometry{1, 4, 6};
  return shape;
}

// Runs `blocks` blocks of one denoising pass and a clean pass through both policies and returns
// the largest difference of their outputs.
double rollout_difference(AttentionPolicy& a, AttentionPolicy& b, const ModelShape& shape,
                          int blocks, at::Generator& gen) {
  double worst = 0.0;
  for (int block = 0; block < blocks; ++block) {
    for (int pass = 0; pass < 2; ++pass) {
      const bool clean = pass == 1;
      const StepInfo step = step_info(shape, block, pass, 1, clean);
      const testing::Qkv x = random_qkv(shape, gen);
      for (int layer = 0; layer < shape.num_layers; ++layer) {
        worst = std::max(worst, max_abs_diff(a.attend(layer, x.q, x.k, x.v, step),
                                             b.attend(layer, x.q, x.k, x.v, step)));
        if (clean) {
          a.commit(layer, x.k, x.v, step);
          b.commit(layer, x.k, x.v, step);
        }
      }
    }
  }
  return worst;
}

TEST(AnnsaPolicy, EveryBucketProbedIsDenseAndFastArIsTempCache) {
  const uint64_t seed = fresh_seed();
  SCOPED_TRACE(seed_trace(seed));
  at::Generator gen = at::make_generator<at::CPUGeneratorImpl>(seed);
  const ModelShape shape = policy_shape();
  const nlohmann::json all = {
      {"ann_bits", 3}, {"ann_radius", 3}, {"ann_tile", 16}, {"ann_block", 16}};
  auto annsa = create_policy("annsa", shape, all);
  auto dense = create_policy("dense", shape, {{"window", 4}});
  annsa->configure({{"window", 4}});
  EXPECT_LT(rollout_difference(*annsa, *dense, shape, 7, gen), 2e-5);
  EXPECT_NEAR(annsa->stats().ann.kept_share(), 1.0, 1e-9);

  nlohmann::json merged = all;
  merged["tau"] = 0.5;
  merged["budget_frames"] = 3;
  auto fast_ar = create_policy("fast-ar", shape, merged);
  auto tempcache = create_policy("tempcache", shape, {{"tau", 0.5}, {"budget_frames", 3}});
  EXPECT_LT(rollout_difference(*fast_ar, *tempcache, shape, 7, gen), 2e-5);
  EXPECT_EQ(fast_ar->stats().total_tokens(), tempcache->stats().total_tokens());
}

TEST(AnnsaPolicy, FewBucketsAttendPartOfTheHistory) {
  const uint64_t seed = fresh_seed();
  SCOPED_TRACE(seed_trace(seed));
  at::Generator gen = at::make_generator<at::CPUGeneratorImpl>(seed);
  const ModelShape shape = policy_shape();
  auto annsa = create_policy(
      "annsa", shape, {{"ann_bits", 5}, {"ann_radius", 0}, {"ann_tile", 16}, {"ann_block", 16}});
  auto dense = create_policy("dense", shape, nlohmann::json::object());
  const double difference = rollout_difference(*annsa, *dense, shape, 6, gen);
  const PolicyStats stats = annsa->stats();
  EXPECT_EQ(stats.policy, "annsa");
  EXPECT_GT(difference, 1e-4);  // it is not dense attention
  EXPECT_GT(stats.ann.history_pairs, 0.0);
  EXPECT_LT(stats.ann.kept_share(), 0.6);
  EXPECT_GE(stats.ann.gathered_pairs, stats.ann.allowed_pairs);
  EXPECT_GT(stats.ann.largest_bucket, 0.0);
  EXPECT_LE(stats.ann.largest_bucket, 1.0);
  annsa->reset();
  EXPECT_EQ(annsa->stats().ann.history_pairs, 0.0);
}

TEST(AnnsaPolicy, SettingsRoundTripAndRefusals) {
  const ModelShape shape = policy_shape();
  auto annsa = create_policy("annsa", shape, nlohmann::json::object());
  const nlohmann::json settings = annsa->settings();
  EXPECT_EQ(settings.at("ann_bits"), 6);
  EXPECT_EQ(settings.at("ann_radius"), 1);
  EXPECT_TRUE(settings.contains("window"));
  annsa->configure({{"ann_bits", 4}, {"ann_radius", 2}, {"window", 3}});
  EXPECT_EQ(annsa->settings().at("ann_bits"), 4);
  EXPECT_EQ(annsa->settings().at("window"), 3);
  const auto refused = [&](AttentionPolicy& policy, const nlohmann::json& bad,
                           const std::string& needle) {
    const nlohmann::json before = policy.settings();
    try {
      policy.configure(bad);
      ADD_FAILURE() << "accepted " << bad.dump();
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find(needle), std::string::npos) << e.what();
    }
    EXPECT_EQ(policy.settings(), before) << "a refused setting changed " << bad.dump();
  };
  refused(*annsa, {{"ann_bits", 0}}, "'ann_bits': must be in [1, 10]");
  refused(*annsa, {{"ann_bits", 11}}, "[1, 10]");
  refused(*annsa, {{"ann_radius", 5}}, "'ann_radius'");
  refused(*annsa, {{"ann_block", 20}}, "multiple of 16");
  refused(*annsa, {{"ann_tile", 1.5}}, "'ann_tile'");
  refused(*annsa, {{"ann_bits", 3}, {"window", -1}}, "window");
  refused(*annsa, {{"tau", 0.5}}, "unknown key");
  auto fast_ar = create_policy("fast-ar", shape, nlohmann::json::object());
  EXPECT_GT(fast_ar->settings().at("budget").get<int64_t>(), 0);  // bounded by default
  refused(*fast_ar, {{"tau", 2.0}}, "tau");
  refused(*fast_ar, {{"ann_seed", -1}}, "ann_seed");
  EXPECT_THROW(create_policy("fast-ar", shape, {{"ann_tile", 8}}), Error);
  const auto names = policy_names();
  EXPECT_NE(std::find(names.begin(), names.end(), "annsa"), names.end());
  EXPECT_NE(std::find(names.begin(), names.end(), "fast-ar"), names.end());
}

TEST(AnnsaPolicy, HeadCastGlobalHeadsUnderAnnAttendAsAnnsa) {
  const uint64_t seed = fresh_seed();
  SCOPED_TRACE(seed_trace(seed));
  at::Generator gen = at::make_generator<at::CPUGeneratorImpl>(seed);
  const ModelShape shape = policy_shape();
  const nlohmann::json ann = {
      {"ann_bits", 5}, {"ann_radius", 0}, {"ann_tile", 16}, {"ann_block", 16}, {"window", 4}};
  nlohmann::json global = ann;
  global["global_ann"] = true;
  global["cast"] = {{"mix", {0, 0, 0, shape.num_heads}}};
  auto headcast = create_policy("headcast", shape, global);
  auto annsa = create_policy("annsa", shape, ann);
  EXPECT_LT(rollout_difference(*headcast, *annsa, shape, 6, gen), 2e-5);
  const PolicyStats stats = headcast->stats();
  EXPECT_EQ(stats.ann.history_pairs, annsa->stats().ann.history_pairs);
  EXPECT_EQ(stats.ann.allowed_pairs, annsa->stats().ann.allowed_pairs);
  EXPECT_LT(stats.ann.kept_share(), 0.6);
  EXPECT_FALSE(headcast->attend_replay_key().has_value());
  headcast->reset();
  EXPECT_EQ(headcast->stats().ann.history_pairs, 0.0);
}

TEST(AnnsaPolicy, HeadCastGlobalAnnProbingEveryBucketIsHeadCast) {
  const uint64_t seed = fresh_seed();
  SCOPED_TRACE(seed_trace(seed));
  at::Generator gen = at::make_generator<at::CPUGeneratorImpl>(seed);
  const ModelShape shape = policy_shape();
  // Sink, Dummy and Global heads; only the Global one goes through the buckets.
  const nlohmann::json cast = {{"window", 4}, {"cast", {{"mix", {1, 1, 0, 1}}}}, {"seed", 3}};
  nlohmann::json global = cast;
  global.update({{"global_ann", true},
                 {"ann_bits", 3},
                 {"ann_radius", 3},
                 {"ann_tile", 16},
                 {"ann_block", 16}});
  auto with_ann = create_policy("headcast", shape, global);
  auto plain = create_policy("headcast", shape, cast);
  EXPECT_LT(rollout_difference(*with_ann, *plain, shape, 6, gen), 2e-5);
  const PolicyStats stats = with_ann->stats();
  EXPECT_NEAR(stats.ann.kept_share(), 1.0, 1e-9);
  // One of three heads is Global: its history pairs are all the counters hold.
  EXPECT_GT(stats.ann.history_pairs, 0.0);
  EXPECT_EQ(plain->stats().ann.history_pairs, 0.0);
}

TEST(AnnsaPolicy, HeadCastGlobalAnnSettings) {
  const ModelShape shape = policy_shape();
  auto headcast = create_policy("headcast", shape, nlohmann::json::object());
  EXPECT_FALSE(headcast->settings().contains("global_ann"));  // other readers see it unchanged
  headcast->configure({{"global_ann", true}, {"ann_bits", 4}});
  EXPECT_EQ(headcast->settings().at("global_ann"), true);
  EXPECT_EQ(headcast->settings().at("ann_bits"), 4);
  EXPECT_EQ(headcast->settings().at("ann_radius"), 1);
  const auto refused = [&](const nlohmann::json& bad, const std::string& needle) {
    const nlohmann::json before = headcast->settings();
    try {
      headcast->configure(bad);
      ADD_FAILURE() << "accepted " << bad.dump();
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find(needle), std::string::npos) << e.what();
    }
    EXPECT_EQ(headcast->settings(), before) << "a refused setting changed " << bad.dump();
  };
  refused({{"global_ann", 1}}, "'global_ann': expected true or false");
  refused({{"ann_bits", 0}}, "'ann_bits': must be in [1, 10]");
  refused({{"ann_block", 24}}, "multiple of 16");
  try {
    create_policy("combined", shape, {{"global_ann", true}});
    ADD_FAILURE() << "combined accepted global_ann";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("global_ann"), std::string::npos) << e.what();
  }
  headcast->configure({{"global_ann", false}});
  EXPECT_FALSE(headcast->settings().contains("global_ann"));
}

}  // namespace
}  // namespace wc::attention
