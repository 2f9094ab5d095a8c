// The head copy kernel (engine/attention/headcast/head_copy.h) against ATen's index_select /
// index_copy_ on fresh random inputs: dtypes whose rows take 16-, 8-, 4- and 2-byte vectors, odd
// row sizes, batches above one, a token-major target, and the layouts it must decline (cell views),
// where HeadSelection falls back to ATen with the same result.
#include <ATen/CPUGeneratorImpl.h>
#include <gtest/gtest.h>
#include <torch/cuda.h>

#include <vector>

#include "engine/attention/headcast/head_copy.h"
#include "engine/attention/headcast/head_groups.h"
#include "tests/attention/attention_reference.h"

namespace wc::attention {
namespace {

using testing::fresh_seed;
using testing::seed_trace;

constexpr const char* kNoCuda = "no CUDA device in this build or on this machine";

at::Tensor random(std::vector<int64_t> sizes, at::ScalarType type, at::Generator& gen) {
  return at::randn(sizes, gen, at::TensorOptions().dtype(at::kFloat)).to(at::kCUDA, type);
}

TEST(HeadCopyGpu, GatherAndScatterEqualAtenIndexOps) {
  if (!torch::cuda::is_available()) GTEST_SKIP() << kNoCuda;
  const uint64_t seed = fresh_seed();
  SCOPED_TRACE(seed_trace(seed));
  at::Generator gen = at::detail::createCPUGenerator(seed);
  struct Case {
    at::ScalarType type;
    std::vector<int64_t> sizes;  // [B, H, T, D]
  };
  const std::vector<Case> cases = {{at::kBFloat16, {1, 12, 300, 128}},
                                   {at::kFloat, {2, 6, 17, 64}},
                                   {at::kHalf, {2, 5, 9, 6}},       // 12-byte rows: 4-byte vectors
                                   {at::kBFloat16, {1, 7, 11, 3}},  // 6-byte rows: 2-byte vectors
                                   {at::kFloat, {3, 4, 1, 5}}};
  const std::vector<int> heads_of = {4, 0, 2};  // not contiguous, not sorted
  for (const Case& c : cases) {
    SCOPED_TRACE(c.sizes[3]);
    std::vector<int> heads;
    for (int h : heads_of) {
      if (h < c.sizes[1]) heads.push_back(h);
    }
    const HeadSelection sel(heads, at::kCUDA);
    const at::Tensor index = at::tensor(std::vector<int64_t>(heads.begin(), heads.end()),
                                        at::TensorOptions().dtype(at::kLong))
                                 .to(at::kCUDA);
    const at::Tensor x = random(c.sizes, c.type, gen);
    const auto fast = gather_heads_fast(x, index);
    ASSERT_TRUE(fast.has_value());
    EXPECT_TRUE(at::equal(*fast, x.index_select(1, index)));
    EXPECT_TRUE(at::equal(sel.gather(x), x.index_select(1, index)));

    // Scatter into a token-major output (as the policies' layer outputs are) and a plain one.
    std::vector<int64_t> src_sizes = c.sizes;
    src_sizes[1] = static_cast<int64_t>(heads.size());
    const at::Tensor src = random(src_sizes, c.type, gen);
    for (bool token_major : {true, false}) {
      const at::Tensor base = random(c.sizes, c.type, gen);
      at::Tensor out =
          token_major ? base.transpose(1, 2).contiguous().transpose(1, 2) : base.clone();
      at::Tensor want = base.clone();
      want.index_copy_(1, index, src);
      ASSERT_TRUE(scatter_heads_fast(out, src, index));
      EXPECT_TRUE(at::equal(out, want)) << "token-major " << token_major;
    }
  }
}

TEST(HeadCopyGpu, DeclinesLayoutsItCannotWalkAndTheFallbackAgrees) {
  if (!torch::cuda::is_available()) GTEST_SKIP() << kNoCuda;
  const uint64_t seed = fresh_seed();
  SCOPED_TRACE(seed_trace(seed));
  at::Generator gen = at::detail::createCPUGenerator(seed);
  // A cell view: [B, H, 2, 3, 4, 5, D] with rows and columns split and permuted.
  const at::Tensor base = random({1, 4, 4, 10, 15, 8}, at::kBFloat16, gen);
  const at::Tensor cells = base.view({1, 4, 4, 2, 5, 3, 5, 8}).permute({0, 1, 3, 5, 2, 4, 6, 7});
  const at::Tensor index =
      at::tensor(std::vector<int64_t>{3, 1}, at::TensorOptions().dtype(at::kLong)).to(at::kCUDA);
  EXPECT_FALSE(gather_heads_fast(cells, index).has_value());
  const HeadSelection sel({3, 1}, at::kCUDA);
  EXPECT_TRUE(at::equal(sel.gather(cells), cells.index_select(1, index)));
  // A CPU tensor is declined too.
  EXPECT_FALSE(gather_heads_fast(base.cpu(), index.cpu()).has_value());
}

}  // namespace
}  // namespace wc::attention
