// TempCache on the CPU in float32: the log-count lemma, tau = 1 == dense, merging and running
// means, the hard budget (both rules), the vectorised matcher against the loop, the bias paths,
// bad settings. Fresh random inputs per run; the seed is printed on failure.
#include <ATen/CPUGeneratorImpl.h>
#include <ATen/record_function.h>
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <map>
#include <string>
#include <vector>

#include "engine/attention/biased_attention.h"
#include "engine/attention/headcast/cast_settings.h"
#include "engine/attention/registry.h"
#include "engine/attention/sdpa.h"
#include "engine/attention/tempcache/temp_cache_match.h"
#include "engine/attention/tempcache/tempcache_policy.h"
#include "engine/core/error.h"
#include "tests/attention/attention_reference.h"
#include "tests/attention/tempcache_reference.h"

namespace wc::attention {
namespace {

using testing::fresh_seed;
using testing::run_block;
using testing::seed_trace;

ModelShape small_shape(int heads = 2, int batch = 1) {
  ModelShape shape;
  shape.num_layers = 1;
  shape.num_heads = heads;
  shape.head_dim = 32;
  shape.batch = batch;
  shape.geometry = BlockGeometry{2, 3, 4};
  return shape;
}

at::Tensor randn(const std::vector<int64_t>& sizes, at::Generator& gen) {
  return at::randn(sizes, gen, at::TensorOptions().dtype(at::kFloat));
}

// A block's keys, frame by frame: each token copies the co-located key of the previous frame
// (prev, [B, H, N, D]) with probability `keep`, else is fresh. Updates prev.
at::Tensor planted_keys(const ModelShape& shape, at::Tensor& prev, double keep,
                        at::Generator& gen) {
  const auto& g = shape.geometry;
  std::vector<at::Tensor> frames;
  for (int f = 0; f < g.frames; ++f) {
    const at::Tensor fresh =
        randn({shape.batch, shape.num_heads, g.tokens_per_frame(), shape.head_dim}, gen);
    if (!prev.defined()) {
      prev = fresh;
    } else {
      const at::Tensor copy =
          at::rand({shape.batch, shape.num_heads, g.tokens_per_frame(), 1}, gen).lt(keep);
      prev = at::where(copy, prev, fresh);
    }
    frames.push_back(prev);
  }
  return at::cat(frames, 2);
}

// Dense attention of q against every committed key (no compression) plus the current block.
at::Tensor uncompressed(const std::vector<at::Tensor>& ks, const std::vector<at::Tensor>& vs,
                        const at::Tensor& q) {
  return reference_attention(q, at::cat(ks, 2), at::cat(vs, 2));
}

TEST(TempCache, IdenticalKeysWithLogCountEqualDenseAttention) {
  const uint64_t seed = fresh_seed();
  SCOPED_TRACE(seed_trace(seed));
  at::Generator gen = at::make_generator<at::CPUGeneratorImpl>(seed);
  const ModelShape shape = small_shape(3, 2);
  auto policy = create_policy("tempcache", shape, {{"tau", 0.95}, {"lsh_bits", 4}});
  std::vector<at::Tensor> ks, vs;
  at::Tensor prev;
  const int64_t t = shape.geometry.tokens_per_block();
  for (int64_t block = 0; block < 6; ++block) {
    const at::Tensor k = planted_keys(shape, prev, 0.7, gen);
    const at::Tensor v = randn({shape.batch, shape.num_heads, t, shape.head_dim}, gen);
    const at::Tensor q = randn({shape.batch, shape.num_heads, t, shape.head_dim}, gen);
    ks.push_back(k);
    vs.push_back(v);
    const at::Tensor out = run_block(*policy, shape, block, q, k, v);
    EXPECT_LT(testing::max_abs_diff(out, uncompressed(ks, vs, q)), 1e-4) << "block " << block;
  }
  const PolicyStats stats = policy->stats();
  const TypeStats& dense = stats.per_type[static_cast<size_t>(HeadType::kDense)];
  EXPECT_GT(dense.merges, 0);
  EXPECT_LT(dense.cached_tokens, 6 * t * shape.num_heads);
  EXPECT_GT(dense.mean_group_size, 1.0);
}

TEST(TempCache, TauOneMergesNothingAndEqualsDense) {
  const uint64_t seed = fresh_seed();
  SCOPED_TRACE(seed_trace(seed));
  at::Generator gen = at::make_generator<at::CPUGeneratorImpl>(seed);
  const ModelShape shape = small_shape(2, 2);
  for (int64_t window : {int64_t{0}, int64_t{6}}) {
    SCOPED_TRACE("window " + std::to_string(window));
    auto tempcache = create_policy("tempcache", shape, {{"tau", 1.0}, {"window", window}});
    auto dense = create_policy("dense", shape, {{"window", window}});
    at::Tensor prev;
    const int64_t t = shape.geometry.tokens_per_block();
    for (int64_t block = 0; block < 6; ++block) {
      const at::Tensor k = planted_keys(shape, prev, 0.9, gen);  // identical keys must not merge
      const at::Tensor v = randn({shape.batch, shape.num_heads, t, shape.head_dim}, gen);
      const at::Tensor q = randn({shape.batch, shape.num_heads, t, shape.head_dim}, gen);
      const at::Tensor a = run_block(*tempcache, shape, block, q, k, v);
      const at::Tensor b = run_block(*dense, shape, block, q, k, v);
      EXPECT_LT(testing::max_abs_diff(a, b), 1e-5) << "block " << block;
    }
    const PolicyStats stats = tempcache->stats();
    EXPECT_EQ(stats.per_type[0].merges, 0);
    EXPECT_EQ(stats.per_type[0].cached_tokens, dense->stats().total_tokens());
  }
}

TEST(TempCache, NearDuplicatesMergeAndOthersAppend) {
  const uint64_t seed = fresh_seed();
  SCOPED_TRACE(seed_trace(seed));
  at::Generator gen = at::make_generator<at::CPUGeneratorImpl>(seed);
  ModelShape shape = small_shape(2);
  const int64_t n = shape.geometry.tokens_per_frame();
  const std::vector<int64_t> frame_sizes = {1, 2, n, 32};
  const at::Tensor base = randn(frame_sizes, gen);
  // cos(base, base + 0.05·noise) ≈ 0.999 > 0.9; a fresh key: |cos| ≈ 0.2 < 0.9.
  const at::Tensor near = base + 0.05 * randn(frame_sizes, gen);
  const at::Tensor fresh = randn(frame_sizes, gen);
  const at::Tensor v = randn({1, 2, 2 * n, 32}, gen);
  for (bool duplicate : {true, false}) {
    auto policy = create_policy("tempcache", shape, {{"tau", 0.9}});
    const at::Tensor k = at::cat({base, duplicate ? near : fresh}, 2);
    run_block(*policy, shape, 0, randn({1, 2, 2 * n, 32}, gen), k, v);
    const auto& store = static_cast<TempCachePolicy&>(*policy).store(0);
    for (int row = 0; row < 2; ++row) {
      const auto e = store.entries(row);
      if (duplicate) {
        ASSERT_EQ(e.counts.size(0), n);
        EXPECT_TRUE(e.counts.eq(2).all().item<bool>());
        // The representative is the newest key; the value is the mean.
        EXPECT_LT(testing::max_abs_diff(e.keys, near[0][row]), 1e-6);
        const at::Tensor mean = (v[0][row].narrow(0, 0, n) + v[0][row].narrow(0, n, n)) / 2;
        EXPECT_LT(testing::max_abs_diff(e.values, mean), 1e-6);
      } else {
        ASSERT_EQ(e.counts.size(0), 2 * n);
        EXPECT_TRUE(e.counts.eq(1).all().item<bool>());
      }
    }
  }
}

TEST(TempCache, RunningMeansAreExactMeansAndStaticHistoryStaysOneFrame) {
  const uint64_t seed = fresh_seed();
  SCOPED_TRACE(seed_trace(seed));
  at::Generator gen = at::make_generator<at::CPUGeneratorImpl>(seed);
  const ModelShape shape = small_shape(2);
  const auto& g = shape.geometry;
  const int64_t n = g.tokens_per_frame();
  auto policy = create_policy("tempcache", shape, {{"tau", 0.9}, {"lsh_bits", 0}});
  const at::Tensor base = randn({1, 2, n, 32}, gen);
  at::Tensor sums = at::zeros({1, 2, n, 32}, at::kDouble);
  at::Tensor newest;
  const int blocks = 20;
  for (int64_t block = 0; block < blocks; ++block) {
    std::vector<at::Tensor> frames;
    for (int f = 0; f < g.frames; ++f) frames.push_back(base + 0.01 * randn({1, 2, n, 32}, gen));
    const at::Tensor k = at::cat(frames, 2);
    newest = frames.back();
    const at::Tensor v = randn({1, 2, g.tokens_per_block(), 32}, gen) * 3 + 1;
    for (int f = 0; f < g.frames; ++f) sums += v.narrow(2, f * n, n).to(at::kDouble);
    run_block(*policy, shape, block, randn({1, 2, g.tokens_per_block(), 32}, gen), k, v);
    EXPECT_EQ(policy->stats().per_type[0].cached_tokens, 2 * n) << "block " << block;
  }
  const auto& store = static_cast<TempCachePolicy&>(*policy).store(0);
  const double frames = blocks * g.frames;
  for (int row = 0; row < 2; ++row) {
    const auto e = store.entries(row);
    EXPECT_TRUE(e.counts.eq(frames).all().item<bool>());
    EXPECT_LT(testing::max_abs_diff(e.values, (sums[0][row] / frames).to(at::kFloat)), 1e-5);
    EXPECT_LT(testing::max_abs_diff(e.keys, newest[0][row]), 1e-7);
  }
  EXPECT_DOUBLE_EQ(policy->stats().per_type[0].mean_group_size, frames);
}

TEST(TempCache, BudgetEvictsTheOldestNonSinkEntries) {
  const uint64_t seed = fresh_seed();
  SCOPED_TRACE(seed_trace(seed));
  at::Generator gen = at::make_generator<at::CPUGeneratorImpl>(seed);
  const ModelShape shape = small_shape(2, 2);
  const auto& g = shape.geometry;
  const int64_t t = g.tokens_per_block();
  const int64_t budget = t + g.tokens_per_frame() + 5;
  auto policy = create_policy("tempcache", shape, {{"budget", budget}});
  std::vector<at::Tensor> ks;
  for (int64_t block = 0; block < 7; ++block) {
    const at::Tensor k = randn({2, 2, t, 32}, gen);  // random keys never merge at tau 0.9
    ks.push_back(k);
    run_block(*policy, shape, block, randn({2, 2, t, 32}, gen), k, randn({2, 2, t, 32}, gen));
    const auto& store = static_cast<TempCachePolicy&>(*policy).store(0);
    EXPECT_LE(store.max_entries(), budget);
  }
  const auto& store = static_cast<TempCachePolicy&>(*policy).store(0);
  const at::Tensor all = at::cat(ks, 2);  // [B, H, 7T, D]
  const int64_t total = all.size(2);
  for (int row = 0; row < 4; ++row) {
    const at::Tensor keys = all[row / 2][row % 2];
    const at::Tensor expected =
        at::cat({keys.narrow(0, 0, t), keys.narrow(0, total - (budget - t), budget - t)}, 0);
    const auto e = store.entries(row);
    ASSERT_EQ(e.keys.size(0), budget);
    EXPECT_LT(testing::max_abs_diff(e.keys, expected), 1e-7);
    EXPECT_TRUE(e.sink.narrow(0, 0, t).all().item<bool>());
  }
  EXPECT_EQ(policy->stats().per_type[0].evictions, 4 * (total - budget));
}

// Note [TempCache bounded by default]: without a limit of its own, a scrolling world's history
// stays within the default window's tokens; "budget": 0 asks for the unbounded cache.
TEST(TempCache, BoundedByDefaultAndUnboundedOnlyWhenAsked) {
  const uint64_t seed = fresh_seed();
  SCOPED_TRACE(seed_trace(seed));
  at::Generator gen = at::make_generator<at::CPUGeneratorImpl>(seed);
  const ModelShape shape = small_shape(2);
  const auto& g = shape.geometry;
  const int64_t t = g.tokens_per_block();
  const int64_t default_budget = default_cast_settings(shape).window * g.tokens_per_frame();
  auto bounded = create_policy("tempcache", shape, nlohmann::json::object());
  auto unbounded = create_policy("tempcache", shape, {{"budget", 0}});
  auto by_frames = create_policy("tempcache", shape, {{"budget_frames", 5}});
  EXPECT_EQ(bounded->settings()["budget"], default_budget);
  EXPECT_EQ(unbounded->settings()["budget"], 0);
  EXPECT_EQ(by_frames->settings()["budget"], 5 * g.tokens_per_frame());
  const int64_t blocks = default_cast_settings(shape).window / g.frames + 6;
  for (int64_t block = 0; block < blocks; ++block) {
    // Fresh keys every block: a scrolling world, where nothing merges.
    const at::Tensor k = randn({1, 2, t, 32}, gen), v = randn({1, 2, t, 32}, gen),
                     q = randn({1, 2, t, 32}, gen);
    for (auto* policy : {bounded.get(), unbounded.get(), by_frames.get()}) {
      run_block(*policy, shape, block, q, k, v);
    }
  }
  const auto entries = [](const AttentionPolicy& policy) {
    return static_cast<const TempCachePolicy&>(policy).store(0).max_entries();
  };
  EXPECT_LE(entries(*bounded), default_budget);
  EXPECT_LE(entries(*by_frames), 5 * g.tokens_per_frame());
  EXPECT_EQ(entries(*unbounded), blocks * t);
}

TEST(TempCache, MergeClosestKeepsTheBudgetAndConservesMass) {
  const uint64_t seed = fresh_seed();
  SCOPED_TRACE(seed_trace(seed));
  at::Generator gen = at::make_generator<at::CPUGeneratorImpl>(seed);
  const ModelShape shape = small_shape(2);
  const int64_t t = shape.geometry.tokens_per_block();
  const int64_t budget = t + shape.geometry.tokens_per_frame() + 3;
  auto policy =
      create_policy("tempcache", shape, {{"budget", budget}, {"budget_rule", "merge_closest"}});
  at::Tensor value_sum = at::zeros({2, 32}, at::kDouble);
  const int blocks = 6;
  for (int64_t block = 0; block < blocks; ++block) {
    const at::Tensor v = randn({1, 2, t, 32}, gen);
    value_sum += v[0].sum(1).to(at::kDouble);
    run_block(*policy, shape, block, randn({1, 2, t, 32}, gen), randn({1, 2, t, 32}, gen), v);
  }
  const auto& store = static_cast<TempCachePolicy&>(*policy).store(0);
  for (int row = 0; row < 2; ++row) {
    const auto e = store.entries(row);
    EXPECT_EQ(e.keys.size(0), budget);
    EXPECT_DOUBLE_EQ(e.counts.sum().item<double>(), static_cast<double>(blocks * t));
    const at::Tensor mass =
        (e.values.to(at::kDouble) * e.counts.to(at::kDouble).unsqueeze(1)).sum(0);
    EXPECT_LT((mass - value_sum[row]).abs().max().item<double>(), 1e-3);
    EXPECT_TRUE(e.counts.narrow(0, 0, t).eq(1).all().item<bool>());  // the sink block untouched
  }
  EXPECT_EQ(policy->stats().per_type[0].evictions, 0);
  EXPECT_EQ(policy->stats().per_type[0].merges, 2 * (blocks * t - budget));
}

TEST(TempCache, VectorisedMatcherEqualsLoop) {
  const uint64_t seed = fresh_seed();
  SCOPED_TRACE(seed_trace(seed));
  at::Generator gen = at::make_generator<at::CPUGeneratorImpl>(seed);
  const int64_t rows = 3, cap = 40, n = 24, d = 16;
  for (int bits : {0, 3}) {
    for (int candidates : {1, 2, 5}) {
      MatchInputs in;
      in.entry_keys = randn({rows, cap + 1, d + 2}, gen);
      in.capacity = cap;
      // Slots with holes, in a shuffled insertion order (Note [TempCache slots]).
      in.entry_valid = at::rand({rows, cap + 1}, gen).lt(0.8);
      in.entry_seq = at::stack(
          {at::randperm(cap + 1, gen), at::randperm(cap + 1, gen), at::randperm(cap + 1, gen)});
      const at::Tensor projections = lsh_projections(rows, d, bits, seed, at::kCPU);
      in.entry_codes = lsh_codes(in.entry_keys.narrow(2, 0, d), projections);
      in.colocated = at::randint(-1, n, {rows, n}, gen, at::TensorOptions().dtype(at::kLong));
      // A third are near-copies of their co-located entry, a third of a random entry (found by
      // the bucket search, or not), a third fresh.
      const at::Tensor pick =
          at::randint(0, n, {rows, n}, gen, at::TensorOptions().dtype(at::kLong));
      const at::Tensor source = at::where(at::arange(n).lt(n / 3), in.colocated.clamp_min(0), pick);
      const at::Tensor copied =
          in.entry_keys.narrow(2, 0, d).gather(1, source.unsqueeze(-1).expand({rows, n, d}));
      const at::Tensor fresh = randn({rows, n, d}, gen);
      in.new_keys = at::where(at::arange(n).lt(2 * n / 3).view({1, n, 1}),
                              copied + 0.05 * randn({rows, n, d}, gen), fresh);
      in.new_codes = lsh_codes(in.new_keys, projections);
      in.tau = 0.9;
      in.bits = bits;
      in.candidates = candidates;
      const at::Tensor fast = match_keys(in);
      const at::Tensor slow = testing::loop_match(in);
      EXPECT_TRUE(fast.equal(slow)) << "bits " << bits << " candidates " << candidates << "\n"
                                    << fast << "\n"
                                    << slow;
      EXPECT_GT(fast.ge(0).sum().item<int64_t>(), 0);
    }
  }
}

TEST(TempCache, BiasPathsAgreeWithTheReference) {
  const uint64_t seed = fresh_seed();
  SCOPED_TRACE(seed_trace(seed));
  at::Generator gen = at::make_generator<at::CPUGeneratorImpl>(seed);
  const int64_t d = 24, dp = padded_head_dim(d), tk = 30;
  ASSERT_EQ(dp, 32);
  const at::Tensor q = randn({2, 3, 7, d}, gen);
  at::Tensor keys = at::zeros({2, 3, tk, dp});
  at::Tensor values = at::zeros({2, 3, tk, dp});
  keys.narrow(3, 0, d).copy_(randn({2, 3, tk, d}, gen));
  values.narrow(3, 0, d).copy_(randn({2, 3, tk, d}, gen));
  at::Tensor bias = (at::rand({2, 3, tk}, gen) * 50).add(1).log();
  bias.narrow(2, 20, 5).fill_(kPadBias);  // padding slots: zero keys and values
  keys.narrow(2, 20, 5).zero_();
  values.narrow(2, 20, 5).zero_();
  write_bias_dims(keys, bias, d);
  // Float64 ground truth without the padding slots.
  const at::Tensor keep = at::cat({at::arange(20), at::arange(25, tk)});
  const at::Tensor truth = reference_attention(
      q.to(at::kDouble), keys.narrow(3, 0, d).index_select(2, keep).to(at::kDouble),
      values.narrow(3, 0, d).index_select(2, keep).to(at::kDouble), std::nullopt,
      bias.index_select(2, keep).unsqueeze(2).to(at::kDouble));
  for (BiasPath path : {BiasPath::kExtraDim, BiasPath::kMask, BiasPath::kReference}) {
    const at::Tensor out = biased_attention(q, keys, values, bias, path);
    EXPECT_LT(testing::max_abs_diff(out, truth), 1e-5) << bias_path_name(path);
  }
}

TEST(TempCache, BadSettingsNameTheKey) {
  const ModelShape shape = small_shape();
  const auto expect_error = [&](const nlohmann::json& settings, const std::string& key) {
    try {
      create_policy("tempcache", shape, settings);
      ADD_FAILURE() << "accepted " << settings.dump();
    } catch (const Error& error) {
      EXPECT_NE(std::string(error.what()).find("'" + key + "'"), std::string::npos) << error.what();
    }
  };
  expect_error({{"tua", 0.9}}, "tua");
  expect_error({{"tau", 1.5}}, "tau");
  expect_error({{"tau", "high"}}, "tau");
  expect_error({{"budget", -1}}, "budget");
  expect_error({{"budget", 10}}, "budget");  // below the sink block + one frame (36)
  expect_error({{"budget_rule", "lru"}}, "budget_rule");
  expect_error({{"window", 1}}, "window");
  expect_error({{"lsh_bits", 17}}, "lsh_bits");
  expect_error({{"lsh_candidates", 0}}, "lsh_candidates");
  expect_error({{"seed", -3}}, "seed");
  expect_error({{"bias_path", "fast"}}, "bias_path");
  expect_error({{"budget_frames", 1}}, "budget_frames");  // below the sink block + one frame
  expect_error({{"budget_frames", -1}}, "budget_frames");
  expect_error({{"budget", 36}, {"budget_frames", 3}}, "budget_frames");
  auto policy =
      create_policy("tempcache", shape, {{"budget", 36}, {"budget_rule", "merge_closest"}});
  EXPECT_EQ(policy->settings()["budget"], 36);
  EXPECT_EQ(policy->settings()["budget_rule"], "merge_closest");
  EXPECT_THROW(policy->configure({{"window", -2}}), Error);
}

// Counts the ATen operators dispatched on this thread while alive, and those among them that read
// a device value back to the host (they synchronise on CUDA: .item(), nonzero, masked_select,
// boolean indexing, unique, equal). The CPU build runs the very operators the CUDA build runs, so
// a commit that dispatches none of them is sync-free on the GPU too (tests/gpu checks with CUDA's
// sync debug mode as well).
class DispatchCounter {
 public:
  DispatchCounter() {
    ops() = 0;
    syncs().clear();
    handle_ = at::addThreadLocalCallback(
        at::RecordFunctionCallback(&DispatchCounter::on_start).scopes({at::RecordScope::FUNCTION}));
  }
  ~DispatchCounter() { at::removeCallback(handle_); }
  static int64_t& ops() {
    thread_local int64_t count = 0;
    return count;
  }
  static std::map<std::string, int64_t>& syncs() {
    thread_local std::map<std::string, int64_t> names;
    return names;
  }

 private:
  static std::unique_ptr<at::ObserverContext> on_start(const at::RecordFunction& fn) {
    ++ops();
    const char* name = fn.name();
    for (const char* sync :
         {"aten::_local_scalar_dense", "aten::item", "aten::nonzero", "aten::masked_select",
          "aten::_unique", "aten::unique", "aten::equal", "aten::is_nonzero"}) {
      if (std::strncmp(name, sync, std::strlen(sync)) == 0) ++syncs()[name];
    }
    return nullptr;
  }
  at::CallbackHandle handle_;
};

TEST(TempCache, CommitDispatchesNothingThatSynchronises) {
  const uint64_t seed = fresh_seed();
  SCOPED_TRACE(seed_trace(seed));
  at::Generator gen = at::make_generator<at::CPUGeneratorImpl>(seed);
  ModelShape shape = small_shape(4, 2);
  shape.num_layers = 2;
  const int64_t t = shape.geometry.tokens_per_block();
  const int64_t n = shape.geometry.tokens_per_frame();
  const std::vector<std::pair<std::string, nlohmann::json>> runs = {
      {"tempcache", {{"budget", 4 * n}, {"lsh_bits", 4}}},
      {"tempcache", {{"budget", 4 * n}, {"budget_rule", "merge_closest"}}},
      {"tempcache", {{"window", 6}}},
      {"combined", {{"cast", {{"mix", {1, 1, 1, 1}}}}, {"cell", 2}, {"budget", 4 * n}}}};
  for (const auto& [name, settings] : runs) {
    SCOPED_TRACE(name + " " + settings.dump());
    auto policy = create_policy(name, shape, settings);
    at::Tensor prev;
    for (int64_t block = 0; block < 6; ++block) {
      const at::Tensor k = planted_keys(shape, prev, 0.6, gen);
      const at::Tensor q = randn({2, 4, t, 32}, gen);
      const at::Tensor v = randn({2, 4, t, 32}, gen);
      StepInfo step;
      step.block_index = block;
      step.clean_pass = true;
      step.geometry = shape.geometry;
      int64_t ops = 0;
      {
        DispatchCounter counter;
        for (int l = 0; l < shape.num_layers; ++l) policy->attend(l, q, k, v, step);
        for (int l = 0; l < shape.num_layers; ++l) policy->commit(l, k, v, step);
        ops = DispatchCounter::ops();
        EXPECT_TRUE(DispatchCounter::syncs().empty())
            << "block " << block << ": " << DispatchCounter::syncs().begin()->first;
      }
      EXPECT_GT(ops, 0);  // the counter does see the block's operators
      if (block == 5)
        std::printf("%s: %lld ATen ops per block (2 layers)\n", name.c_str(),
                    static_cast<long long>(ops));
    }
    // Stats read counters back (that is allowed there) and the counter sees it.
    DispatchCounter counter;
    EXPECT_GT(policy->stats().total_tokens(), 0);
    EXPECT_FALSE(DispatchCounter::syncs().empty());
  }
}

}  // namespace
}  // namespace wc::attention
