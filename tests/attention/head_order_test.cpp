// Note [Head order]: HeadCast driven with q, k, v in its head_order() (output read back in that
// order) gives exactly the outputs of the same policy driven in the model's order, over rollouts
// that cast (forced and online), commit, re-cast on a live settings change and merge groups.
#include <gtest/gtest.h>

#include <numeric>
#include <vector>

#include "engine/attention/registry.h"
#include "tests/attention/attention_reference.h"

namespace wc::attention {
namespace {

using testing::fresh_seed;
using testing::Qkv;

ModelShape order_shape() {
  ModelShape shape;
  shape.num_layers = 2;
  shape.num_heads = 6;
  shape.head_dim = 8;
  shape.geometry = BlockGeometry{2, 4, 4};
  return shape;
}

// Runs `blocks` blocks through a policy driven in the model's order and one driven in its head
// order; returns how many (block, layer) attention calls had an order other than the identity.
int expect_grouped_matches_plain(const nlohmann::json& settings, int blocks, uint64_t seed) {
  const ModelShape shape = order_shape();
  auto plain = create_policy("headcast", shape, settings);
  auto grouped = create_policy("headcast", shape, settings);
  at::Generator gen = at::detail::createCPUGenerator(seed);
  constexpr int kSteps = 2;
  int permuted = 0;
  for (int64_t block = 0; block < blocks; ++block) {
    if (block == blocks / 2) {  // a live change re-casts both
      plain->configure({{"window", 6}});
      grouped->configure({{"window", 6}});
    }
    for (int step = 0; step <= kSteps; ++step) {
      const StepInfo info = testing::step_info(shape, block, step, kSteps, step == kSteps);
      StepInfo grouped_info = info;
      grouped_info.heads_grouped = true;
      for (int layer = 0; layer < shape.num_layers; ++layer) {
        const std::vector<int>* order = grouped->head_order(layer);
        EXPECT_NE(order, nullptr);
        if (order == nullptr) return permuted;
        std::vector<int> identity(order->size());
        std::iota(identity.begin(), identity.end(), 0);
        permuted += *order != identity;
        const at::Tensor index = at::tensor(std::vector<int64_t>(order->begin(), order->end()),
                                            at::TensorOptions().dtype(at::kLong));
        const Qkv in = testing::random_qkv(shape, gen);
        const at::Tensor want = plain->attend(layer, in.q, in.k, in.v, info);
        const at::Tensor kg = in.k.index_select(1, index), vg = in.v.index_select(1, index);
        const at::Tensor got_grouped =
            grouped->attend(layer, in.q.index_select(1, index), kg, vg, grouped_info);
        const at::Tensor got = at::empty_like(want).index_copy_(1, index, got_grouped);
        EXPECT_TRUE(at::equal(got, want))
            << "block " << block << " step " << step << " layer " << layer;
        if (info.clean_pass) {
          plain->commit(layer, in.k, in.v, info);
          grouped->commit(layer, kg, vg, grouped_info);
        }
      }
    }
  }
  EXPECT_EQ(grouped->stats().total_tokens(), plain->stats().total_tokens());
  return permuted;
}

TEST(HeadOrder, GroupedHeadCastEqualsModelOrder) {
  const uint64_t seed = fresh_seed();
  SCOPED_TRACE(testing::seed_trace(seed));
  // A forced cast (types shuffled over the heads): grouped from the first block.
  const nlohmann::json forced = {{"window", 8}, {"cell", 2}, {"cast", {{"mix", {1, 1, 2, 2}}}}};
  EXPECT_GT(expect_grouped_matches_plain(forced, 12, seed), 0);
  // Cast online after the warm-up: the identity until the cast, then the cast's groups.
  const nlohmann::json online = {{"window", 8}, {"cell", 2}, {"query_sample", 0}};
  expect_grouped_matches_plain(online, 14, seed);
}

TEST(HeadOrder, PoliciesWithoutGroupsOfferNoOrder) {
  const ModelShape shape = order_shape();
  for (const char* name : {"dense", "tempcache", "combined", "dummy"}) {
    EXPECT_EQ(create_policy(name, shape, nlohmann::json::object())->head_order(0), nullptr) << name;
  }
}

}  // namespace
}  // namespace wc::attention
