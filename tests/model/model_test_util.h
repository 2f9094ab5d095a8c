// Shared fixtures of the model and rollout tests: a tiny config built in code (runs in
// milliseconds on the CPU) and a straightforward full-history policy used as the reference.
#pragma once

#include <ATen/ATen.h>

#include <algorithm>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "engine/attention/attention_policy.h"
#include "engine/attention/registry.h"
#include "engine/attention/sdpa.h"
#include "engine/model/codebook.h"
#include "engine/model/model_config.h"

namespace wc::testing {

inline model::ModelConfig tiny_config(int frames_per_block = 1) {
  model::ModelConfig c;
  c.name = "tiny";
  c.channels = 3;
  c.frame = {16, 16};
  c.resolutions["wide"] = {16, 32};
  c.patch_h = 4;
  c.patch_w = 4;
  c.frames_per_block = frames_per_block;
  c.hidden = 32;
  c.layers = 2;
  c.heads = 2;
  c.head_dim = 16;
  c.mlp = 64;
  c.num_actions = 5;
  c.freq_dim = 32;
  c.sampler.steps = 2;
  c.sampler.shift = 3.0;
  return c;
}

// A token model of the tiny config (Note [Patch tokens]) over a codebook of 40 random 4x4
// patches of 4 colours, 3 passes.
inline model::ModelConfig tiny_token_config() {
  std::mt19937 random(5);
  model::Codebook book;
  book.patch = 4;
  book.colours = {{0, 0, 0}, {255, 255, 255}, {98, 178, 74}, {46, 102, 204}};
  while (book.size() < 40) {
    std::vector<uint8_t> e(16);
    for (auto& x : e) x = static_cast<uint8_t>(random() % 4);
    if (std::find(book.entries.begin(), book.entries.end(), e) == book.entries.end()) {
      book.entries.push_back(e);
    }
  }
  model::ModelConfig c = tiny_config();
  c.tokens.vocab = book.size();
  c.tokens.passes = 3;
  c.tokens.codebook = std::make_shared<const model::Codebook>(book);
  return c;
}

// Every committed block, unbounded: attention over [history, current] with the reference kernel.
class FullHistoryPolicy : public attention::AttentionPolicy {
 public:
  explicit FullHistoryPolicy(const attention::ModelShape& shape)
      : k_(static_cast<size_t>(shape.num_layers)), v_(static_cast<size_t>(shape.num_layers)) {}
  std::string name() const override { return "test_full_history"; }
  at::Tensor attend(int layer, const at::Tensor& q, const at::Tensor& k, const at::Tensor& v,
                    const attention::StepInfo&) override {
    const auto& hk = k_[static_cast<size_t>(layer)];
    const auto& hv = v_[static_cast<size_t>(layer)];
    if (!hk.defined()) return attention::reference_attention(q, k, v);
    return attention::reference_attention(q, at::cat({hk, k}, 2), at::cat({hv, v}, 2));
  }
  void commit(int layer, const at::Tensor& k, const at::Tensor& v,
              const attention::StepInfo&) override {
    auto& hk = k_[static_cast<size_t>(layer)];
    auto& hv = v_[static_cast<size_t>(layer)];
    hk = hk.defined() ? at::cat({hk, k}, 2) : k.clone();
    hv = hv.defined() ? at::cat({hv, v}, 2) : v.clone();
  }
  attention::PolicyStats stats() const override {
    attention::PolicyStats stats;
    stats.policy = name();
    return stats;
  }
  void reset() override {
    for (auto& t : k_) t = at::Tensor();
    for (auto& t : v_) t = at::Tensor();
  }
  void configure(const nlohmann::json&) override {}
  nlohmann::json settings() const override { return nlohmann::json::object(); }

 private:
  std::vector<at::Tensor> k_, v_;
};

inline void register_full_history_policy() {
  attention::register_policy("test_full_history",
                             [](const attention::ModelShape& shape, const nlohmann::json&) {
                               return std::make_unique<FullHistoryPolicy>(shape);
                             });
}

inline attention::ModelShape shape_for(const model::ModelConfig& c, model::FrameSize size) {
  attention::ModelShape shape;
  shape.num_layers = c.layers;
  shape.num_heads = c.heads;
  shape.head_dim = c.head_dim;
  shape.geometry = {c.frames_per_block, c.grid_h(size), c.grid_w(size)};
  return shape;
}

// Expects `fn` to throw wc::Error whose message contains every one of `parts`.
template <typename Fn>
std::string error_of(Fn&& fn) {
  try {
    fn();
  } catch (const std::exception& error) {
    return error.what();
  }
  return "(no error)";
}

}  // namespace wc::testing
