// The DiT modules (see dit.h). All tensors flow in the parameters' dtype except norms and
// embeddings, which are computed in float32 (ops.h) and cast back.
#include "engine/model/dit.h"

#include <c10/core/GradMode.h>

#include <torch/version.h>

#include <cmath>

#include "engine/attention/sdpa.h"
#include "engine/core/error.h"
#include "engine/model/fused_ops.h"

namespace wc::model {
namespace {

torch::nn::Linear make_linear(int64_t in, int64_t out) {
  return torch::nn::Linear(torch::nn::LinearOptions(in, out).bias(true));
}

// x · Wᵀ + b through ATen's linear, which folds the bias into the matrix product for any
// contiguous input. The C++ frontend's Linear::forward does that for 2-D inputs only: for the
// model's [B, T, D] tokens it runs a product and then a separate pass adding the bias (five
// extra passes over the tokens per layer, about 2% of a Wan 720P block on the H200).
at::Tensor project(const torch::nn::Linear& layer, const at::Tensor& x) {
  return at::linear(x, layer->weight, layer->bias);
}

}  // namespace

RmsNormImpl::RmsNormImpl(int64_t dim, double eps) : eps_(eps) {
  weight = register_parameter("weight", at::ones({dim}));
}

namespace {

// The q, k, v, o projections and the q/k RMS norms of an attention module (self- or cross-),
// registered under the checkpoint's names in model_tensor_specs order.
template <typename Attention>
void register_projections(Attention& a, const ModelConfig& config) {
  const int64_t d = config.hidden;
  a.q = a.register_module("q", make_linear(d, d));
  a.k = a.register_module("k", make_linear(d, d));
  a.v = a.register_module("v", make_linear(d, d));
  a.o = a.register_module("o", make_linear(d, d));
  a.norm_q = a.register_module("norm_q", RmsNorm(d, config.norm_eps));
  a.norm_k = a.register_module("norm_k", RmsNorm(d, config.norm_eps));
}

}  // namespace

SelfAttentionImpl::SelfAttentionImpl(const ModelConfig& config)
    : heads_(config.heads), head_dim_(config.head_dim) {
  register_projections(*this, config);
}

at::Tensor SelfAttentionImpl::forward(const at::Tensor& x, const RopeRotation& rope, int layer,
                                      const AttendFn& attend, const std::vector<int>* order) {
  const int64_t b = x.size(0), t = x.size(1);
  // Handles, not references into the cache: a commit inside `attend` may re-cast, and the
  // output projection must still match the order q, k, v went out in.
  const Projections w = projections(order);
  // [B, T, D] -> [B, H, T, Dh]
  const at::Tensor qh =
      qk_norm_rope(at::linear(x, w.q_w, w.q_b), w.norm_q, rope, heads_, norm_q->eps());
  const at::Tensor kh =
      qk_norm_rope(at::linear(x, w.k_w, w.k_b), w.norm_k, rope, heads_, norm_k->eps());
  const at::Tensor vh =
      at::linear(x, w.v_w, w.v_b).view({b, t, heads_, head_dim_}).transpose(1, 2).contiguous();
  const at::Tensor out = attend(layer, qh, kh, vh);
  return at::linear(out.transpose(1, 2).reshape({b, t, int64_t{heads_} * head_dim_}), w.o_w,
                    o->bias);
}

SelfAttentionImpl::Projections SelfAttentionImpl::projections(const std::vector<int>* order) {
  bool identity = true;
  if (order != nullptr) {
    for (size_t j = 0; j < order->size(); ++j) identity &= (*order)[j] == static_cast<int>(j);
  }
  if (identity) {
    return {q->weight, q->bias,   k->weight,      k->bias,       v->weight,
            v->bias,   o->weight, norm_q->weight, norm_k->weight};
  }
  const std::vector<at::Tensor> weights = {q->weight, q->bias,        k->weight,
                                           k->bias,   v->weight,      v->bias,
                                           o->weight, norm_q->weight, norm_k->weight};
  std::vector<std::pair<const void*, int64_t>> sources;
  for (const at::Tensor& w : weights) sources.emplace_back(w.data_ptr(), w._version());
  if (grouped_.order == *order && grouped_.sources == sources) return grouped_.weights;
  TORCH_CHECK(static_cast<int>(order->size()) == heads_, "SelfAttention: a head order of ",
              order->size(), " heads for ", heads_);
  // Row r of the grouped projection is row order[r / Dh]·Dh + r % Dh of the model's.
  std::vector<int64_t> rows;
  rows.reserve(static_cast<size_t>(heads_) * static_cast<size_t>(head_dim_));
  for (int head : *order) {
    TORCH_CHECK(head >= 0 && head < heads_, "SelfAttention: head ", head, " out of range");
    for (int i = 0; i < head_dim_; ++i) rows.push_back(int64_t{head} * head_dim_ + i);
  }
  const at::Tensor index =
      at::tensor(rows, at::TensorOptions().dtype(at::kLong)).to(q->weight.device());
  const at::NoGradGuard no_grad;
  Grouped g;
  g.order = *order;
  g.sources = std::move(sources);
  g.weights = {q->weight.index_select(0, index),     q->bias.index_select(0, index),
               k->weight.index_select(0, index),     k->bias.index_select(0, index),
               v->weight.index_select(0, index),     v->bias.index_select(0, index),
               o->weight.index_select(1, index),     norm_q->weight.index_select(0, index),
               norm_k->weight.index_select(0, index)};
  grouped_ = std::move(g);
  return grouped_.weights;
}

CrossAttentionImpl::CrossAttentionImpl(const ModelConfig& config)
    : heads_(config.heads), head_dim_(config.head_dim) {
  register_projections(*this, config);
}

PromptKv CrossAttentionImpl::prompt_kv(const at::Tensor& context) {
  const int64_t b = context.size(0), l = context.size(1);
  const auto heads = [&](const at::Tensor& x) {
    return x.view({b, l, heads_, head_dim_}).transpose(1, 2).contiguous();
  };
  return {heads(norm_k(project(k, context))), heads(project(v, context))};
}

at::Tensor CrossAttentionImpl::forward(const at::Tensor& x, const PromptKv& prompt, int layer,
                                       const CrossAttendFn& attend) {
  const int64_t b = x.size(0), t = x.size(1);
  const at::Tensor qh =
      norm_q(project(q, x)).view({b, t, heads_, head_dim_}).transpose(1, 2).contiguous();
  const auto batched = [&](const at::Tensor& p) {
    return p.size(0) == b ? p : p.expand({b, p.size(1), p.size(2), p.size(3)});
  };
  const at::Tensor out = attend(layer, qh, batched(prompt.k), batched(prompt.v));
  return project(o, out.transpose(1, 2).reshape({b, t, int64_t{heads_} * head_dim_}));
}

AffineLayerNormImpl::AffineLayerNormImpl(int64_t dim, double eps) : eps_(eps) {
  weight = register_parameter("weight", at::ones({dim}));
  bias = register_parameter("bias", at::zeros({dim}));
}

at::Tensor AffineLayerNormImpl::forward(const at::Tensor& x) {
  return at::layer_norm(x, {x.size(-1)}, weight, bias, eps_);
}

TextEmbeddingImpl::TextEmbeddingImpl(int64_t width, int64_t dim) {
  fc1 = register_module("fc1", make_linear(width, dim));
  fc2 = register_module("fc2", make_linear(dim, dim));
}

at::Tensor TextEmbeddingImpl::forward(const at::Tensor& prompt) {
  return project(fc2, at::gelu(project(fc1, prompt), "tanh"));
}

MlpImpl::MlpImpl(int64_t dim, int64_t hidden) {
  fc1 = register_module("fc1", make_linear(dim, hidden));
  fc2 = register_module("fc2", make_linear(hidden, dim));
}

at::Tensor MlpImpl::forward(const at::Tensor& x) {
  return project(fc2, linear_gelu(x, fc1->weight, fc1->bias));
}

DiTBlockImpl::DiTBlockImpl(const ModelConfig& config) : eps_(config.norm_eps) {
  const int64_t d = config.hidden;
  modulation = register_parameter("modulation", at::randn({1, 6, d}) / std::sqrt(double(d)));
  attn = register_module("attn", SelfAttention(config));
  if (config.cross_attention.active()) {
    norm3 = register_module("norm3", AffineLayerNorm(d, config.norm_eps));
    cross = register_module("cross", CrossAttention(config));
  }
  mlp = register_module("mlp", Mlp(d, config.mlp));
}

at::Tensor DiTBlockImpl::forward(const at::Tensor& x, const at::Tensor& cond,
                                 const RopeRotation& rope, int layer, const AttendFn& attend,
                                 const std::vector<int>* order, const PromptKv* prompt,
                                 const CrossAttendFn* cross_attend) {
  // Wan's order of the six vectors: shift, scale, gate (attention), shift, scale, gate (MLP).
  const at::Tensor mod = cond + modulation.unsqueeze(0);  // [B, F, 6, D]
  const auto part = [&](int i) { return mod.select(2, i); };
  at::Tensor h = gated_residual(
      x, attn(layer_norm_modulate(x, part(0), part(1), eps_), rope, layer, attend, order), part(2));
  if (cross) {
    TORCH_CHECK(prompt != nullptr && cross_attend != nullptr,
                "DiTBlock: a block with cross-attention needs the prompt's keys and values");
    h = h + cross(norm3(h), *prompt, layer, *cross_attend);
  }
  return gated_residual(h, mlp(layer_norm_modulate(h, part(3), part(4), eps_)), part(5));
}

TimeEmbeddingImpl::TimeEmbeddingImpl(int64_t freq_dim, int64_t dim)
    : freq_dim_(static_cast<int>(freq_dim)) {
  fc1 = register_module("fc1", make_linear(freq_dim, dim));
  fc2 = register_module("fc2", make_linear(dim, dim));
}

at::Tensor TimeEmbeddingImpl::forward(const at::Tensor& t) {
  const at::Tensor features = timestep_embedding(t, freq_dim_).to(fc1->weight.scalar_type());
  return project(fc2, at::silu(project(fc1, features)));
}

HeadImpl::HeadImpl(int64_t dim, int64_t patch_dim, double eps) : eps_(eps) {
  modulation = register_parameter("modulation", at::randn({1, 2, dim}) / std::sqrt(double(dim)));
  proj = register_module("proj", make_linear(dim, patch_dim));
}

at::Tensor HeadImpl::forward(const at::Tensor& x, const at::Tensor& embedding) {
  const at::Tensor mod = embedding.unsqueeze(2) + modulation.unsqueeze(0);  // [B, F, 2, D]
  return project(proj, layer_norm_modulate(x, mod.select(2, 0), mod.select(2, 1), eps_));
}

CausalDiTImpl::CausalDiTImpl(const ModelConfig& config) : config_(config) {
  const int64_t d = config.hidden;
  if (config.tokens.active()) {
    token_embed = register_module(
        "token_embed", torch::nn::Embedding(int64_t{config.tokens.vocab} + 1, d));  // + the mask
  } else {
    patch_embed = register_module("patch_embed", make_linear(config.patch_dim(), d));
  }
  if (!config.tile_quarters.empty()) {
    tile_quarters = register_module("tile_quarters", torch::nn::Embedding(4, d));
  }
  time_embed = register_module("time_embed", TimeEmbedding(config.freq_dim, d));
  action_embed = register_module("action_embed", torch::nn::Embedding(config.num_actions, d));
  time_proj = register_module("time_proj", make_linear(d, 6 * d));
  if (config.cross_attention.active()) {
    text_embedding =
        register_module("text_embedding", TextEmbedding(config.cross_attention.width, d));
  }
  blocks = register_module("blocks", torch::nn::ModuleList());
  for (int i = 0; i < config.layers; ++i) blocks->push_back(DiTBlock(config));
  head = register_module("head", Head(d, config.output_patch_dim(), config.norm_eps));
}

std::vector<PromptKv> CausalDiTImpl::prompt_kvs(const at::Tensor& prompt, bool one) {
  const CrossAttentionConfig& cross = config_.cross_attention;
  if (!cross.active()) {
    throw Error(config_.file.empty() ? config_.name : config_.file,
                "a prompt for a model without cross-attention");
  }
  const at::Tensor p = prompt.dim() == 2 ? prompt.unsqueeze(0) : prompt;
  if (p.dim() != 3 || (one && p.size(0) != 1) || p.size(1) != cross.tokens ||
      p.size(2) != cross.width) {
    std::string shape;
    for (int64_t i = 0; i < prompt.dim(); ++i)
      shape += (i ? ", " : "") + std::to_string(prompt.size(i));
    throw Error(config_.file.empty() ? config_.name : config_.file,
                "field 'cross_attention': the prompt must be [" + std::to_string(cross.tokens) +
                    ", " + std::to_string(cross.width) + "] embeddings, got [" + shape + "]");
  }
  const at::Tensor context = text_embedding(p.to(device(), dtype()));
  std::vector<PromptKv> kv;
  for (const auto& module : *blocks)
    kv.push_back(module->as<DiTBlockImpl>()->cross->prompt_kv(context));
  return kv;
}

void CausalDiTImpl::set_prompt(const at::Tensor& prompt) {
  const at::NoGradGuard no_grad;
  prompt_kv_ = prompt_kvs(prompt, /*one=*/true);
}

at::Tensor CausalDiTImpl::forward(const FrameBatch& batch, const AttendFn& attend, bool with_head,
                                  const HeadOrderFn& order, const CrossAttendFn& cross_attend) {
  const ModelConfig& c = config_;
  const at::Tensor& frames = batch.frames;
  const bool tokens = c.tokens.active();
  if (tokens) {
    TORCH_CHECK(frames.dim() == 4 && frames.scalar_type() == at::kLong,
                "CausalDiT: a token model's frames must be int64 tokens [B, F, h, w], got ",
                frames.sizes());
  } else {
    TORCH_CHECK(frames.dim() == 5 && frames.size(2) == c.channels,
                "CausalDiT: frames must be [B, F, ", c.channels, ", H, W], got ", frames.sizes());
  }
  const int64_t b = frames.size(0);
  const int frames_count = static_cast<int>(frames.size(1));
  const int gh = static_cast<int>(tokens ? frames.size(2) : frames.size(3) / c.patch_h);
  const int gw = static_cast<int>(tokens ? frames.size(3) : frames.size(4) / c.patch_w);
  TORCH_CHECK(batch.t.sizes() == at::IntArrayRef({b, frames_count}) &&
                  batch.actions.sizes() == at::IntArrayRef({b, frames_count}),
              "CausalDiT: t and actions must be [B, F]");

  at::Tensor x = tokens ? at::embedding(token_embed->weight, frames.reshape({b, -1}))
                        : project(patch_embed, patchify(frames.to(dtype()), c.patch_h, c.patch_w));
  if (tile_quarters && batch.quarters.defined()) {
    // Note [Tile quarters]: each known frame's vectors by place; none where the frame's is −1.
    TORCH_CHECK(batch.quarters.sizes() == at::IntArrayRef({b, frames_count}),
                "CausalDiT: quarters must be [B, F]");
    const int64_t n = int64_t{gh} * gw;
    const at::Tensor q = batch.quarters.to(x.device(), at::kLong);
    const at::Tensor rows =
        tile_quarter_rows(gh, gw, x.device()).index_select(0, q.clamp_min(0).reshape({-1}));
    const at::Tensor known = q.ge(0).reshape({b, frames_count, 1, 1}).to(x.scalar_type());
    const at::Tensor added =
        at::embedding(tile_quarters->weight, rows).view({b, frames_count, n, c.hidden});
    x = (x.reshape({b, frames_count, n, c.hidden}) +
         added.to(x.scalar_type()) * known * kTileQuarterScale)
            .view({b, -1, c.hidden});
  }
  const at::Tensor embedding = time_embed(batch.t) + action_embed(batch.actions);  // [B, F, D]
  const at::Tensor cond =
      project(time_proj, at::silu(embedding)).view({b, frames_count, 6, c.hidden});
  RopeRotation explicit_rope;
  if (batch.positions.defined() && batch.rope == nullptr) {
    TORCH_CHECK(batch.positions.sizes() == at::IntArrayRef({b, frames_count}),
                "CausalDiT: positions must be [B, F]");
    explicit_rope = rope_rotation(rope_table_at(batch.positions, gh, gw, c.head_dim, c.rope_theta),
                                  x.device(), x.scalar_type());
  }
  const RopeRotation& rope = batch.rope != nullptr ? *batch.rope
                             : batch.positions.defined()
                                 ? explicit_rope
                                 : rope_for(batch.frame_start, frames_count, gh, gw, x);
  // The prompt's keys and values (a model with cross-attention): the batch's own, or set_prompt's.
  std::vector<PromptKv> batch_prompt;
  const std::vector<PromptKv>* prompt = nullptr;
  const CrossAttendFn dense_cross = [](int, const at::Tensor& q, const at::Tensor& k,
                                       const at::Tensor& v) {
    return attention::attention(q, k, v);
  };
  const CrossAttendFn& cross = cross_attend ? cross_attend : dense_cross;
  if (c.cross_attention.active()) {
    if (batch.prompt.defined()) {
      batch_prompt = prompt_kvs(batch.prompt, /*one=*/false);
      prompt = &batch_prompt;
    } else {
      TORCH_CHECK(!prompt_kv_.empty(),
                  "CausalDiT: this model attends to a prompt: set_prompt() or FrameBatch::prompt");
      prompt = &prompt_kv_;
    }
  }
  int layer = 0;
  for (const auto& module : *blocks) {
    const std::vector<int>* heads = order ? order(layer) : nullptr;
    x = module->as<DiTBlockImpl>()->forward(
        x, cond, rope, layer, attend, heads,
        prompt != nullptr ? &(*prompt)[static_cast<size_t>(layer)] : nullptr, &cross);
    ++layer;
  }
  if (!with_head) return at::Tensor();
  const int first = batch.head_first_frame;
  TORCH_CHECK(first >= 0 && first < frames_count, "CausalDiT: head_first_frame ", first,
              " outside the ", frames_count, " frames");
  const int scored = frames_count - first;
  const at::Tensor out = head(x.slice(1, int64_t{first} * gh * gw), embedding.slice(1, first));
  if (tokens) return out.view({b, scored, int64_t{gh} * gw, c.tokens.vocab});
  return unpatchify(out, scored, gh, gw, c.channels, c.patch_h, c.patch_w);
}

const RopeRotation& CausalDiTImpl::rope_for(int64_t frame_start, int frames, int grid_h, int grid_w,
                                            const at::Tensor& like) {
  const std::array<int64_t, 4> key{frame_start, frames, grid_h, grid_w};
  if (key != rope_key_ || !rope_cache_.cos.defined() || rope_cache_.cos.device() != like.device() ||
      rope_cache_.cos.scalar_type() != like.scalar_type()) {
    rope_cache_ = rope_rotation(
        rope_table(frame_start, frames, grid_h, grid_w, config_.head_dim, config_.rope_theta),
        like.device(), like.scalar_type());
    rope_key_ = key;
  }
  return rope_cache_;
}

at::Tensor CausalDiTImpl::forward_block(const FrameBatch& batch, attention::AttentionPolicy& policy,
                                        const attention::StepInfo& step) {
  // Note [Head order]: the permuted projections are inference-only copies of the weights.
  attention::StepInfo info = step;
  info.heads_grouped = head_grouping_ && !c10::GradMode::is_enabled();
  const AttendFn attend = [&](int layer, const at::Tensor& q, const at::Tensor& k,
                              const at::Tensor& v) {
    at::Tensor out = policy.attend(layer, q, k, v, info);
    if (info.clean_pass) policy.commit(layer, k, v, info);
    return out;
  };
  HeadOrderFn order;
  if (info.heads_grouped) order = [&](int layer) { return policy.head_order(layer); };
  CrossAttendFn cross;
  if (cross_policy_ != nullptr) {
    cross = [&](int layer, const at::Tensor& q, const at::Tensor& k, const at::Tensor& v) {
      return cross_policy_->attend(layer, q, k, v, info);
    };
  }
  return forward(batch, attend, /*with_head=*/!step.clean_pass, order, cross);
}

at::Tensor CausalDiTImpl::forward_train(const FrameBatch& batch) {
  const ModelConfig& c = config_;
  const int frames_count = static_cast<int>(batch.frames.size(1));
  const int tokens_per_frame = c.tokens.active()
                                   ? static_cast<int>(batch.frames.size(2) * batch.frames.size(3))
                                   : static_cast<int>((batch.frames.size(3) / c.patch_h) *
                                                      (batch.frames.size(4) / c.patch_w));
  return forward_masked(batch,
                        block_causal_mask(frames_count, tokens_per_frame, c.frames_per_block));
}

at::Tensor CausalDiTImpl::forward_masked(const FrameBatch& batch, const at::Tensor& mask) {
  const at::Tensor device_mask = mask.to(batch.frames.device());
  const AttendFn attend = [&](int, const at::Tensor& q, const at::Tensor& k, const at::Tensor& v) {
    return attention::masked_attention(q, k, v, device_mask);
  };
  return forward(batch, attend);
}

at::Tensor CausalDiTImpl::forward_stream(const FrameBatch& batch, const MaskedStream& stream) {
  const AttendFn attend = [&](int, const at::Tensor& q, const at::Tensor& k, const at::Tensor& v) {
    return masked_stream_attention(q, k, v, stream);
  };
  return forward(batch, attend);
}

}  // namespace wc::model
