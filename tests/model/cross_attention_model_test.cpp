// The DiT with cross-attention to a prompt (Wan 2.1's): parameters against the tensor spec, the
// block against a hand-written computation, the cached rollout through the cross-attention
// policies against the training forward, the prompt's errors and the config's fields.
#include <gtest/gtest.h>

#include <limits>
#include <string>

#include "engine/attention/ann/cross_attention_policy.h"
#include "engine/attention/registry.h"
#include "engine/attention/sdpa.h"
#include "engine/core/error.h"
#include "engine/core/safetensors_torch.h"
#include "engine/model/dit.h"
#include "engine/model/prompt.h"
#include "engine/model/weights.h"
#include "tests/model/model_test_util.h"

namespace wc::model {
namespace {

ModelConfig cross_config() {
  ModelConfig c = testing::tiny_config();
  c.cross_attention.tokens = 6;
  c.cross_attention.width = 10;
  return c;
}

at::Tensor linear(const at::Tensor& x, const torch::nn::Linear& l) {
  return at::matmul(x, l->weight.t()) + l->bias;
}

TEST(CrossAttentionModel, ParametersMatchTensorSpecs) {
  const ModelConfig c = cross_config();
  CausalDiT dit(c);
  const std::vector<TensorSpec> specs = model_tensor_specs(c, Dtype::kF32);
  const auto params = dit->named_parameters();
  ASSERT_EQ(params.size(), specs.size());
  size_t i = 0;
  bool cross = false, text = false;
  for (const auto& item : params) {
    EXPECT_EQ(item.key(), specs[i].name);
    EXPECT_EQ(item.value().sizes().vec(), specs[i].shape) << specs[i].name;
    cross |= item.key() == "blocks.1.cross.norm_k.weight";
    text |= item.key() == "text_embedding.fc1.weight" && specs[i].shape[1] == 10;
    ++i;
  }
  EXPECT_TRUE(cross && text);
  // Without cross-attention the model has none of it.
  EXPECT_LT(model_tensor_specs(testing::tiny_config(), Dtype::kF32).size(), specs.size());
}

TEST(CrossAttentionModel, BlockMatchesHandWrittenCrossAttention) {
  const ModelConfig c = cross_config();
  at::manual_seed(3);
  CausalDiT dit(c);
  init_random_weights(dit, 4);
  const at::Tensor prompt = at::randn({6, 10});
  dit->set_prompt(prompt);
  auto* block = dit->blocks[0]->as<DiTBlockImpl>();
  const int t = 12;
  const at::Tensor x = at::randn({1, t, c.hidden});
  const at::Tensor cond = at::randn({1, 1, 6, c.hidden}) * 0.1;
  const RopeTable rope = rope_table(0, 1, 3, 4, c.head_dim, c.rope_theta);
  const RopeRotation rotation = rope_rotation(rope, x.device(), x.scalar_type());
  const AttendFn attend = [](int, const at::Tensor& q, const at::Tensor& k, const at::Tensor& v) {
    return attention::reference_attention(q, k, v);
  };
  const CrossAttendFn cross_attend = attend;
  torch::NoGradGuard no_grad;
  // The same block without its cross-attention, and the cross-attention by hand.
  const PromptKv kv = block->cross->prompt_kv(dit->text_embedding(prompt.unsqueeze(0)));
  const at::Tensor out = block->forward(x, cond, rotation, 0, attend, nullptr, &kv, &cross_attend);
  auto cross = block->cross;
  block->cross = nullptr;
  const at::Tensor without = block->forward(x, cond, rotation, 0, attend);
  block->cross = cross;
  // Wan: h + cross(norm3(h)) after the self-attention's residual, before the MLP; recompute the
  // MLP part on the new residual stream.
  const at::Tensor mod = cond + block->modulation.unsqueeze(0);
  const auto per_token = [&](int i) { return mod.select(2, i).expand({1, t, c.hidden}); };
  const auto ln = [&](const at::Tensor& y) {
    const at::Tensor mean = y.mean(-1, true);
    return (y - mean) / at::sqrt((y - mean).pow(2).mean(-1, true) + c.norm_eps);
  };
  const auto rms = [&](const at::Tensor& y, const at::Tensor& w) {
    return y / at::sqrt(y.pow(2).mean(-1, true) + c.norm_eps) * w;
  };
  const at::Tensor h =
      x + per_token(2) *
              block->attn->forward(ln(x) * (1 + per_token(1)) + per_token(0), rotation, 0, attend);
  const at::Tensor normed = ln(h) * block->norm3->weight + block->norm3->bias;
  const at::Tensor context =
      linear(at::gelu(linear(prompt, dit->text_embedding->fc1), "tanh"), dit->text_embedding->fc2);
  const at::Tensor q = rms(linear(normed, cross->q), cross->norm_q->weight).view({t, 2, 16});
  const at::Tensor k = rms(linear(context, cross->k), cross->norm_k->weight).view({6, 2, 16});
  const at::Tensor v = linear(context, cross->v).view({6, 2, 16});
  const at::Tensor weights = at::softmax(at::einsum("thd,lhd->htl", {q, k}) / std::sqrt(16.0), -1);
  const at::Tensor attended = at::einsum("htl,lhd->thd", {weights, v}).reshape({1, t, c.hidden});
  const at::Tensor h2 = h + linear(attended, cross->o);
  const at::Tensor hidden =
      at::gelu(linear(ln(h2) * (1 + per_token(4)) + per_token(3), block->mlp->fc1), "tanh");
  const at::Tensor expected = h2 + per_token(5) * linear(hidden, block->mlp->fc2);
  EXPECT_TRUE(at::allclose(out, expected, 1e-4, 1e-5))
      << "max diff " << (out - expected).abs().max().item<double>();
  EXPECT_FALSE(at::allclose(out, without, 1e-3, 1e-3));
}

// Block by block through a cross-attention policy against one training forward given the prompt.
at::Tensor rollout(CausalDiT& dit, attention::CrossAttentionPolicy* cross, const at::Tensor& clip,
                   const at::Tensor& actions, int blocks) {
  const ModelConfig& c = dit->config();
  auto policy = attention::create_policy("dense", testing::shape_for(c, c.frame), {{"window", 0}});
  dit->set_cross_policy(cross);
  torch::NoGradGuard no_grad;
  std::vector<at::Tensor> out;
  for (int b = 0; b < blocks; ++b) {
    FrameBatch batch{clip.narrow(1, b, 1), at::zeros({1, 1}), actions.narrow(1, b, 1), b,
                     at::Tensor()};
    attention::StepInfo step;
    step.block_index = b;
    step.noise_level = 0.0;
    step.geometry = {1, 4, 4};
    out.push_back(dit->forward_block(batch, *policy, step));
    step.clean_pass = true;
    step.denoise_step = 1;
    dit->forward_block(batch, *policy, step);
  }
  dit->set_cross_policy(nullptr);
  return at::cat(out, 1);
}

TEST(CrossAttentionModel, CachedRolloutThroughEveryCrossPolicyEqualsTheTrainingForward) {
  const ModelConfig c = cross_config();
  CausalDiT dit(c);
  init_random_weights(dit, 5);
  at::manual_seed(6);
  const int blocks = 3;
  const at::Tensor clip = at::randn({1, blocks, 3, 16, 16});
  const at::Tensor actions = at::randint(c.num_actions, {1, blocks}, at::kLong);
  const at::Tensor prompt = at::randn({1, 6, 10});
  FrameBatch whole{clip, at::zeros({1, blocks}), actions, 0, at::Tensor()};
  whole.prompt = prompt;
  const at::Tensor trained = dit->forward_train(whole);

  EXPECT_THROW(rollout(dit, nullptr, clip, actions, blocks), c10::Error) << "no prompt set";
  dit->set_prompt(prompt);
  const attention::ModelShape shape = testing::shape_for(c, c.frame);
  auto dense = attention::create_cross_policy("dense", shape, nlohmann::json::object());
  auto all = attention::create_cross_policy("annca", shape, {{"min_kept", 6}});
  auto few = attention::create_cross_policy("annca", shape, {{"min_kept", 1}, {"bits", 10}});
  for (attention::CrossAttentionPolicy* cross :
       {static_cast<attention::CrossAttentionPolicy*>(nullptr), dense.get(), all.get()}) {
    const at::Tensor rolled = rollout(dit, cross, clip, actions, blocks);
    EXPECT_TRUE(at::allclose(rolled, trained, 1e-4, 1e-5))
        << (cross ? cross->name() : "default") << ": max diff "
        << (rolled - trained).abs().max().item<double>();
  }
  const at::Tensor pruned = rollout(dit, few.get(), clip, actions, blocks);
  EXPECT_LT(few->stats().kept_share(), 1.0);
  EXPECT_FALSE(at::allclose(pruned, trained, 1e-4, 1e-5)) << "pruning changed nothing";
  // Another prompt, another world.
  whole.prompt = at::randn({1, 6, 10});
  EXPECT_FALSE(at::allclose(dit->forward_train(whole), trained, 1e-3, 1e-3));
}

TEST(CrossAttentionModel, PromptsOfTheWrongShapeAreRefused) {
  CausalDiT dit(cross_config());
  const auto refused = [&](const at::Tensor& prompt, const std::string& needle) {
    try {
      dit->set_prompt(prompt);
      ADD_FAILURE() << "accepted a prompt of " << prompt.sizes();
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find(needle), std::string::npos) << e.what();
    }
  };
  refused(at::zeros({5, 10}), "must be [6, 10] embeddings, got [5, 10]");
  refused(at::zeros({6, 11}), "got [6, 11]");
  refused(at::zeros({2, 6, 10}), "got [2, 6, 10]");
  refused(at::zeros({60}), "got [60]");
  EXPECT_FALSE(dit->has_prompt());
  dit->set_prompt(at::zeros({6, 10}));
  EXPECT_TRUE(dit->has_prompt());
  CausalDiT plain(testing::tiny_config());
  EXPECT_THROW(plain->set_prompt(at::zeros({6, 10})), Error);
}

TEST(CrossAttentionModel, ConfigFieldsRoundTripAndBadValuesAreRefused) {
  nlohmann::json json = model_config_to_json(testing::tiny_config());
  json["cross_attention"] = {{"tokens", 512}, {"width", 4096}};
  const ModelConfig c = parse_model_config(json, "cross.json");
  EXPECT_EQ(c.cross_attention.tokens, 512);
  EXPECT_EQ(c.cross_attention.width, 4096);
  EXPECT_EQ(model_config_to_json(c)["cross_attention"], json["cross_attention"]);
  json["cross_attention"] = nullptr;
  EXPECT_FALSE(parse_model_config(json, "cross.json").cross_attention.active());
  const auto refused = [&](const nlohmann::json& cross, const std::string& needle) {
    nlohmann::json bad = json;
    bad["cross_attention"] = cross;
    try {
      parse_model_config(bad, "cross.json");
      ADD_FAILURE() << "accepted " << cross.dump();
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find(needle), std::string::npos) << e.what();
      EXPECT_NE(std::string(e.what()).find("cross.json"), std::string::npos) << e.what();
    }
  };
  refused({{"tokens", 0}, {"width", 4}}, "tokens");
  refused({{"tokens", 8}}, "width");
  refused({{"tokens", 8}, {"width", 4.5}}, "width");
  refused({{"tokens", 8}, {"width", 4}, {"heads", 2}}, "heads");
  refused("512", "cross_attention");
}

// A prompt file: the "prompt" tensor of a safetensors file, refused by file and what differs.
TEST(CrossAttentionModel, PromptFilesAreReadAndBadOnesRefusedByFileAndShape) {
  const ModelConfig c = cross_config();
  const std::string dir = ::testing::TempDir();
  const auto write = [&](const std::string& name, const TensorMap& tensors) {
    const std::string path = dir + "/wc_prompt_" + name + ".safetensors";
    write_safetensors(path, tensors);
    return path;
  };
  const at::Tensor good = at::randn({6, 10});
  const at::Tensor read = read_prompt(write("good", {{"prompt", good}}), c);
  EXPECT_TRUE(at::equal(read, good));
  EXPECT_TRUE(at::equal(read_prompt(write("half", {{"prompt", good.to(at::kBFloat16)}}), c),
                        good.to(at::kBFloat16).to(at::kFloat)));
  const auto refused = [&](const std::string& path, const std::string& needle,
                           const ModelConfig& config) {
    try {
      read_prompt(path, config);
      ADD_FAILURE() << "accepted " << path;
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find(needle), std::string::npos) << e.what();
    }
  };
  const std::string wide = write("wide", {{"prompt", at::zeros({6, 12})}});
  refused(wide, "shape [6, 12], the model's cross_attention takes [6, 10]", c);
  refused(wide, wide, c);
  refused(write("missing", {{"embeddings", good}}), "'prompt'", c);
  refused(write("ints", {{"prompt", at::zeros({6, 10}, at::kInt)}}), "dtype", c);
  at::Tensor nan = good.clone();
  nan[2][3] = std::numeric_limits<float>::quiet_NaN();
  refused(write("nan", {{"prompt", nan}}), "NaN", c);
  refused(dir + "/wc_prompt_none.safetensors", "wc_prompt_none", c);
  refused(write("plain", {{"prompt", good}}), "no cross-attention", testing::tiny_config());
  // Random prompts are the seed's.
  EXPECT_TRUE(at::equal(random_prompt(c, 3), random_prompt(c, 3)));
  EXPECT_FALSE(at::equal(random_prompt(c, 3), random_prompt(c, 4)));
}

}  // namespace
}  // namespace wc::model
