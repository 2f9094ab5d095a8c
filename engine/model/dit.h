// The causal, action-conditioned DiT (Wan 2.1 / Self-Forcing / Matrix-Game family) as trainable
// torch::nn modules whose parameter names are the checkpoint's tensor names (model_tensor_specs).
// Heavy torch/nn headers: include this only where the modules are built or run.
#pragma once

#include <ATen/ATen.h>
#include <torch/nn/module.h>
#include <torch/nn/modules/container/modulelist.h>
#include <torch/nn/modules/embedding.h>
#include <torch/nn/modules/linear.h>
#include <torch/nn/pimpl.h>

#include <array>
#include <cstdint>
#include <functional>
#include <utility>
#include <vector>

#include "engine/attention/ann/cross_attention_policy.h"
#include "engine/attention/attention_policy.h"
#include "engine/model/masked_stream.h"
#include "engine/model/model_config.h"
#include "engine/model/ops.h"
#include "engine/model/tile_quarters.h"

namespace wc::model {

// Attention of one layer's post-RoPE q, k, v ([B, H, T, D]) -> [B, H, T, D]. The inference path
// routes this to the AttentionPolicy, the training path to masked full attention.
using AttendFn = std::function<at::Tensor(int layer, const at::Tensor& q, const at::Tensor& k,
                                          const at::Tensor& v)>;
// Attention of one layer's cross-attention queries ([B, H, T, D]) to the prompt's keys and values
// ([B or 1, H, L, D]) -> [B, H, T, D]: dense by default, a CrossAttentionPolicy at inference.
using CrossAttendFn = std::function<at::Tensor(int layer, const at::Tensor& q, const at::Tensor& k,
                                               const at::Tensor& v)>;

// One layer's prompt keys and values, [B or 1, H, L, D].
struct PromptKv {
  at::Tensor k, v;
};

// The order in which a layer's heads go to `attend` (position j holds head order[j]), or nullptr
// for the model's own order (Note [Head order], attention_policy.h).
using HeadOrderFn = std::function<const std::vector<int>*(int layer)>;

// What one forward pass is about: frames [B, F, C, H, W] of noise levels t [B, F] under actions
// [B, F] (int64), the first of them at absolute frame index frame_start (RoPE time). For a token
// model (Note [Patch tokens]) the frames are tokens [B, F, h, w] (int64; the codebook's size is
// the mask) and t is the share of each frame's tokens masked.
struct FrameBatch {
  at::Tensor frames;
  at::Tensor t;
  at::Tensor actions;
  int64_t frame_start = 0;
  // Optional [B, F] absolute frame index of every frame (overrides frame_start): training clips
  // place frames at their own offsets, and a clip may hold the same frame twice (clean and noisy).
  at::Tensor positions{};
  // Optional: the RoPE rotation of these frames, already on the model's device and dtype
  // (overrides frame_start and positions). A recorded graph passes its static buffers here, so
  // a replay rotates by whatever positions were copied into them.
  const RopeRotation* rope = nullptr;
  // The output head runs on frames head_first_frame.. only (the output has F − head_first_frame
  // frames): a training sequence scores its noisy frames, not its context.
  int head_first_frame = 0;
  // Optional [B, F] int64: each frame's top-left tile quarter, −1 where unknown (Note [Tile
  // quarters]); a model without quarter vectors ignores it, and undefined means all unknown.
  at::Tensor quarters{};
  // Optional [B or 1, L, width] prompt embeddings of a model with cross-attention (overrides
  // the prompt set with CausalDiTImpl::set_prompt; training passes its own).
  at::Tensor prompt{};
};

class RmsNormImpl : public torch::nn::Module {
 public:
  RmsNormImpl(int64_t dim, double eps);
  at::Tensor forward(const at::Tensor& x) const { return rms_norm(x, weight, eps_); }
  double eps() const { return eps_; }
  at::Tensor weight;

 private:
  double eps_;
};
TORCH_MODULE(RmsNorm);

// Self-attention with RMS-normed q/k over the full hidden size (Wan) and 3D RoPE on q and k
// before the attention callback sees them.
class SelfAttentionImpl : public torch::nn::Module {
 public:
  SelfAttentionImpl(const ModelConfig& config);
  // With `order` (not the identity), q, k, v reach `attend` with their heads in that order and
  // its output is read in that order (Note [Grouped projections]).
  at::Tensor forward(const at::Tensor& x, const RopeRotation& rope, int layer,
                     const AttendFn& attend, const std::vector<int>* order = nullptr);

  torch::nn::Linear q{nullptr}, k{nullptr}, v{nullptr}, o{nullptr};
  RmsNorm norm_q{nullptr}, norm_k{nullptr};

 private:
  // Note [Grouped projections]
  // Heads are independent until the output projection, so permuting the q, k, v projections'
  // rows (and the q/k norm weights, whose RMS runs over the whole hidden size and does not see
  // the order) by head, and the output projection's columns alike, gives the same layer with its
  // heads in another order. The permuted copies are built once per order and reused while the
  // order and the weights (pointer and version counter) stay; inference only.
  struct Projections {
    at::Tensor q_w, q_b, k_w, k_b, v_w, v_b, o_w, norm_q, norm_k;
  };
  struct Grouped {
    std::vector<int> order;
    std::vector<std::pair<const void*, int64_t>> sources;
    Projections weights;
  };
  // The module's own weights for no order or the identity, else the cached permuted copies.
  Projections projections(const std::vector<int>* order);

  int heads_;
  int head_dim_;
  Grouped grouped_;
};
TORCH_MODULE(SelfAttention);

// Cross-attention to a prompt (Wan 2.1's): q from the tokens, k and v from the prompt's
// embeddings, q and k RMS-normed over the hidden size, no RoPE.
class CrossAttentionImpl : public torch::nn::Module {
 public:
  explicit CrossAttentionImpl(const ModelConfig& config);
  // The prompt's keys and values for this layer from its embeddings [B, L, D].
  PromptKv prompt_kv(const at::Tensor& context);
  at::Tensor forward(const at::Tensor& x, const PromptKv& prompt, int layer,
                     const CrossAttendFn& attend);

  torch::nn::Linear q{nullptr}, k{nullptr}, v{nullptr}, o{nullptr};
  RmsNorm norm_q{nullptr}, norm_k{nullptr};

 private:
  int heads_;
  int head_dim_;
};
TORCH_MODULE(CrossAttention);

// A LayerNorm with affine weight and bias (Wan's norm before cross-attention).
class AffineLayerNormImpl : public torch::nn::Module {
 public:
  AffineLayerNormImpl(int64_t dim, double eps);
  at::Tensor forward(const at::Tensor& x);
  at::Tensor weight, bias;

 private:
  double eps_;
};
TORCH_MODULE(AffineLayerNorm);

class MlpImpl : public torch::nn::Module {
 public:
  MlpImpl(int64_t dim, int64_t hidden);
  at::Tensor forward(const at::Tensor& x);
  torch::nn::Linear fc1{nullptr}, fc2{nullptr};
};
TORCH_MODULE(Mlp);

// One transformer block: adaLN (shift/scale/gate for attention and MLP, per frame) around
// self-attention and a GELU(tanh) MLP.
class DiTBlockImpl : public torch::nn::Module {
 public:
  DiTBlockImpl(const ModelConfig& config);
  // x [B, F·N, D]; cond [B, F, 6, D] (the projected conditioning of each frame).
  // `prompt` and `cross_attend`: this layer's prompt and how to attend to it, for a block with
  // cross-attention (both required there, ignored elsewhere).
  at::Tensor forward(const at::Tensor& x, const at::Tensor& cond, const RopeRotation& rope,
                     int layer, const AttendFn& attend, const std::vector<int>* order = nullptr,
                     const PromptKv* prompt = nullptr, const CrossAttendFn* cross_attend = nullptr);

  at::Tensor modulation;  // [1, 6, D], added to cond (Wan)
  SelfAttention attn{nullptr};
  AffineLayerNorm norm3{nullptr};  // null without cross-attention
  CrossAttention cross{nullptr};   // null without cross-attention
  Mlp mlp{nullptr};

 private:
  double eps_;
};
TORCH_MODULE(DiTBlock);

// The noise-level embedding: sinusoidal features through a two-layer SiLU MLP.
class TimeEmbeddingImpl : public torch::nn::Module {
 public:
  TimeEmbeddingImpl(int64_t freq_dim, int64_t dim);
  at::Tensor forward(const at::Tensor& t);  // t [B, F] -> [B, F, D]
  torch::nn::Linear fc1{nullptr}, fc2{nullptr};

 private:
  int freq_dim_;
};
TORCH_MODULE(TimeEmbedding);

// The prompt embeddings' way to the model's width: Linear, GELU (tanh), Linear (Wan).
class TextEmbeddingImpl : public torch::nn::Module {
 public:
  TextEmbeddingImpl(int64_t width, int64_t dim);
  at::Tensor forward(const at::Tensor& prompt);  // [B, L, width] -> [B, L, D]
  torch::nn::Linear fc1{nullptr}, fc2{nullptr};
};
TORCH_MODULE(TextEmbedding);

// The final adaLN (shift/scale per frame) and the linear projection back to patches.
class HeadImpl : public torch::nn::Module {
 public:
  HeadImpl(int64_t dim, int64_t patch_dim, double eps);
  at::Tensor forward(const at::Tensor& x, const at::Tensor& embedding);  // embedding [B, F, D]
  at::Tensor modulation;                                                 // [1, 2, D]
  torch::nn::Linear proj{nullptr};

 private:
  double eps_;
};
TORCH_MODULE(Head);

class CausalDiTImpl : public torch::nn::Module {
 public:
  explicit CausalDiTImpl(const ModelConfig& config);

  const ModelConfig& config() const { return config_; }

  // The generic forward: the network's output ([B, F, C, H, W], the frames' dtype; a token
  // model's logits [B, F, h·w, vocab] in the weights' dtype), the velocity v = ε − x0 or what
  // prediction.h turns into it, for the batch, with each layer's attention delegated to `attend`.
  // With with_head = false the output head is skipped (a committing pass needs only the layers'
  // K/V) and an undefined tensor is returned. `order` (optional) gives each layer's head order for
  // `attend` (Note [Head order]). `cross_attend` (optional) attends to the prompt of a model with
  // cross-attention; dense attention when empty.
  at::Tensor forward(const FrameBatch& batch, const AttendFn& attend, bool with_head = true,
                     const HeadOrderFn& order = nullptr,
                     const CrossAttendFn& cross_attend = nullptr);

  // Inference: one AR block through `policy`. On a clean pass (step.clean_pass) each layer also
  // commits its K/V to the policy and the head is skipped (returns an undefined tensor). With
  // autograd off and head grouping on (the default), each layer's heads go to the policy in its
  // head_order() (Note [Head order]).
  at::Tensor forward_block(const FrameBatch& batch, attention::AttentionPolicy& policy,
                           const attention::StepInfo& step);

  // Training (diffusion forcing): the whole clip at once, per-frame noise levels, block-causal
  // attention (frames_per_block from the config) over all frames of the clip. The reference
  // attention with an explicit mask on the CPU; fused SDPA with a boolean mask on CUDA (LibTorch
  // >= 2). Equal to the block-by-block cached rollout when history frames are at t = 0.
  at::Tensor forward_train(const FrameBatch& batch);

  // Masked full attention over the batch with an explicit [T, T] boolean mask (true = may
  // attend): the training path's attention (reference on the CPU, fused SDPA on CUDA).
  at::Tensor forward_masked(const FrameBatch& batch, const at::Tensor& mask);

  // The same over a training stream (Note [Masked stream attention]): equal to forward_masked
  // with stream.mask(), at the cost of the pairs the stream allows.
  at::Tensor forward_stream(const FrameBatch& batch, const MaskedStream& stream);

  // A model with cross-attention (config().cross_attention): the prompt every later forward
  // attends to (prompt embeddings [L, width] or [1, L, width], any float dtype), its keys and
  // values computed once per layer here, without autograd. wc::Error for another shape or a
  // model without cross-attention.
  void set_prompt(const at::Tensor& prompt);
  bool has_prompt() const { return !prompt_kv_.empty(); }
  // The policy forward_block's cross-attention goes through (not owned; nullptr: dense).
  void set_cross_policy(attention::CrossAttentionPolicy* policy) { cross_policy_ = policy; }
  attention::CrossAttentionPolicy* cross_policy() const { return cross_policy_; }

  // The parameters' device and dtype.
  at::Device device() const { return time_proj->weight.device(); }
  at::ScalarType dtype() const { return time_proj->weight.scalar_type(); }

  // Registration order = model_tensor_specs order. A pixel model embeds patches with
  // patch_embed, a token model (Note [Patch tokens]) its tokens with token_embed; the other
  // is null.
  torch::nn::Linear patch_embed{nullptr};
  torch::nn::Embedding token_embed{nullptr};
  torch::nn::Embedding tile_quarters{nullptr};  // Note [Tile quarters]; null unless configured
  TimeEmbedding time_embed{nullptr};
  torch::nn::Embedding action_embed{nullptr};
  torch::nn::Linear time_proj{nullptr};
  TextEmbedding text_embedding{nullptr};  // null without cross-attention
  torch::nn::ModuleList blocks{nullptr};
  Head head{nullptr};

  // The RoPE rotation of `frames` frames from frame_start, on like's device and dtype, cached:
  // the k + 1 passes of a block share their positions, so it is built once per block.
  const RopeRotation& rope_for(int64_t frame_start, int frames, int grid_h, int grid_w,
                               const at::Tensor& like);

  // Whether forward_block honours the policy's head order (on by default; off to compare).
  void set_head_grouping(bool on) { head_grouping_ = on; }
  bool head_grouping() const { return head_grouping_; }

 private:
  // Every layer's prompt keys and values from prompt embeddings [B, L, width] ([L, width] or
  // [1, L, width] when `one`); wc::Error naming the shapes otherwise.
  std::vector<PromptKv> prompt_kvs(const at::Tensor& prompt, bool one);

  bool head_grouping_ = true;
  ModelConfig config_;
  std::vector<PromptKv> prompt_kv_;  // set_prompt's, per layer
  attention::CrossAttentionPolicy* cross_policy_ = nullptr;
  RopeRotation rope_cache_;
  std::array<int64_t, 4> rope_key_{-1, -1, -1, -1};
};
TORCH_MODULE(CausalDiT);

}  // namespace wc::model
