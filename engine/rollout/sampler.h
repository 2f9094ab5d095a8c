// The flow-matching block sampler: k Euler steps of the DiT's velocity on a shifted schedule,
// then the clean pass that commits the block's K/V to the attention policy.
//
// Convention: x_t = (1 − t)·x0 + t·ε with t = 1 pure noise; the model predicts the velocity
// v = ε − x0 (rectified flow), so x0 = x_t − t·v and an Euler step to t' is x_t + (t' − t)·v.
#pragma once

#include <ATen/ATen.h>

#include <cstdint>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <vector>

#include "engine/attention/attention_policy.h"
#include "engine/model/model_config.h"
#include "engine/model/ops.h"
#include "engine/model/tile_tokenizer.h"
#include "engine/model/tokenizer.h"
#include "engine/rollout/block_graph.h"

namespace wc::model {
class CausalDiTImpl;
}

namespace wc::rollout {

// The noise levels of `steps` denoising steps, descending from 1: uniform levels 1, 1 − 1/k, ...
// warped by t' = s·t / (1 + (s − 1)·t) (Self-Forcing's shift; s = 5 gives 1, .9375, .8333, .625
// for k = 4). The step after the last goes to 0.
std::vector<double> flow_schedule(int steps, double shift);

// Note [Action guidance]
// Classifier-free guidance on the key. Action dropout in training taught the model a velocity
// without the key (the dropped-action token) next to the one with it; their difference is what
// the key adds, and scaling it by w > 1 pushes the frame further towards what the key implies.
// The bundled model leans on the motion in its context more than on the key (its model card),
// so on its own it often stops scrolling; guidance makes the key count. Each guided step costs
// one more forward of the block (not of the committing pass), and the first step, from pure
// noise at t = 1, is where the frame's layout and so its scroll are decided.

// How often generate() replayed a block from a graph (Note [Block graph]).
struct GraphStats {
  int64_t recordings = 0;       // graphs recorded (a new key each time)
  int64_t replayed_blocks = 0;  // blocks that were a replay
};

// Runs blocks of one model through one policy. Holds references: both must outlive it. A token
// model's blocks are drawn by Note [Masked sampling] (token_sampler.h) and handed out decoded,
// as frames in [-1, 1] like a pixel model's; a committed frame is encoded back to tokens.
class BlockSampler {
 public:
  // `cuda_graphs`: let generate() replay blocks from a CUDA graph where the device and the
  // policy allow it (Note [Block graph]); results are the same kernels on the same values.
  BlockSampler(model::CausalDiTImpl& model, attention::AttentionPolicy& policy,
               model::FrameSize size, bool cuda_graphs = true);
  ~BlockSampler();

  // The block's geometry as the policy sees it.
  attention::BlockGeometry geometry() const { return geometry_; }

  // k denoising steps from `noise` ([1, F, C, H, W], model device and dtype) under `actions`
  // ([1, F] int64) for AR block `block_index` (its first frame is at absolute frame index
  // `frame_start`). `reference` ([1, F, C, H, W] like noise: the frame before the block, for
  // every frame) is what a model with the previous-frame skip needs (Note [Previous-frame skip]);
  // other models ignore it and may be given an undefined tensor. Returns the clean block x0.
  at::Tensor denoise(const at::Tensor& noise, const at::Tensor& actions, int64_t block_index,
                     int64_t frame_start, const at::Tensor& reference);

  // The clean pass: the block x0 at the config's context-noise level c (re-noised with
  // `context_eps` when c > 0) through the model with commits, so later blocks attend to it. A
  // token model with tile quarters takes the block's `quarters` ([1, F] int64) when given (a
  // re-commit of a kept block), else follows them from the frame committed before (Note
  // [Quarter tracking]).
  void commit(const at::Tensor& x0, const at::Tensor& actions, int64_t block_index,
              int64_t frame_start, const at::Tensor& context_eps,
              const at::Tensor& quarters = at::Tensor());

  // The tile quarters ([1, F] int64, on the device) of the block committed last, for a kept
  // block's re-commit; undefined for a model without them (Note [Tile quarters]). The tensor is
  // overwritten by the next commit: keep a clone.
  const at::Tensor& committed_quarters() const { return block_quarters_; }

  // A whole block: denoise, then commit; returns x0. Where the device and the policy allow it,
  // replayed from a CUDA graph (Note [Block graph]); the same kernels on the same values.
  at::Tensor generate(const at::Tensor& noise, const at::Tensor& actions, int64_t block_index,
                      int64_t frame_start, const at::Tensor& context_eps,
                      const at::Tensor& reference);

  const GraphStats& graph_stats() const { return graph_stats_; }

  // Note [Play settings], live from the next block on: the values now (the config's until
  // configured), and `settings` (some of their keys) applied. Throws wc::Error naming the key for
  // a bad one, and changes nothing then; a change drops the recorded block graph, which recorded
  // the old values (Note [Block graph]): the next blocks run eagerly and record again.
  nlohmann::json play_settings() const;
  void configure_play(const nlohmann::json& settings);

  // Drops the recorded block graph after a setting it baked in changed.
  void forget_recording();

 private:
  attention::StepInfo step_info(int64_t block_index, int step, double t, bool clean) const;
  // The committing clean pass of block `block_index` (at the context-noise level).
  attention::StepInfo clean_step(int64_t block_index) const;
  // Whether denoising step `step` runs the extra pass of Note [Action guidance].
  bool guided(int step) const;
  // The k forwards, eagerly; `rope` overrides the model's rotation for frame_start.
  at::Tensor run_denoise(const at::Tensor& noise, const at::Tensor& actions, int64_t block_index,
                         int64_t frame_start, const at::Tensor& reference,
                         const model::RopeRotation* rope);
  // A token model's nominal levels for tokens_.passes (schedule_: the share of the first
  // pass's unsure draws still masked when each pass runs), what its steps tell the policy.
  void set_token_schedule();
  // run_denoise for a token model: the passes of Note [Masked sampling], then the decode.
  at::Tensor run_token_denoise(const at::Tensor& noise, const at::Tensor& actions,
                               int64_t block_index, int64_t frame_start,
                               const model::RopeRotation* rope);
  // The clean pass; `device_only` marks its commits as Note [Replayed commit]'s device half.
  void run_commit(const at::Tensor& x0, const at::Tensor& actions, int64_t block_index,
                  int64_t frame_start, const at::Tensor& context_eps,
                  const model::RopeRotation* rope, bool device_only,
                  const at::Tensor& quarters = at::Tensor());
  // The tokens of frames `x0` committed at `frame_start`: the patch codebook's, or a tile
  // model's at the phases `given` ([1, F]; undefined: the sink's from the config, a later
  // frame's the closest).
  at::Tensor encode_frames(const at::Tensor& x0, int64_t frame_start,
                           const at::Tensor& given) const;
  // The quarters of committed `tokens` ([1, F, h, w]) at `frame_start`, kept as the ones the next
  // commit follows (Note [Quarter tracking]); `given` when defined.
  at::Tensor track_quarters(const at::Tensor& tokens, int64_t frame_start, const at::Tensor& given);
  // The block from the graph, recording it first under `key` if it is not the recorded one.
  at::Tensor replay_block(uint64_t key, const at::Tensor& noise, const at::Tensor& actions,
                          int64_t block_index, int64_t frame_start, const at::Tensor& context_eps,
                          const at::Tensor& reference);

  model::CausalDiTImpl& model_;
  attention::AttentionPolicy& policy_;
  model::SamplerConfig sampler_;
  std::vector<double> schedule_;
  attention::BlockGeometry geometry_;
  // A token model's tokenizer (null for a pixel model), its settings with the live temperature
  // and passes, and the tokens of the last frame run_token_denoise decoded (with that frame), so
  // committing it needs no encode.
  std::unique_ptr<model::Tokenizer> tokenizer_;
  // A tile model's (Note [Tile tokens]) instead, with its places' allowed tokens as a logit bias
  // ([h·w, V], 0 or −inf).
  std::unique_ptr<model::TileTokenizer> tile_tokenizer_;
  at::Tensor place_bias_;
  at::Tensor first_places_;  // [h·w] bool: the places drawn first (the phase)
  model::TokenConfig tokens_;
  at::Tensor last_tokens_, last_decoded_;
  // Note [Quarter tracking]: the last committed frame's quarter ([1]) and tokens ([1, h, w]), and
  // the last committed block's quarters ([1, F]); device buffers written in place, so a recorded
  // graph's commit updates them. Undefined until the first commit of a model with quarters.
  at::Tensor quarter_, quarter_tokens_, block_quarters_;
  // Graph state: the recording, its static inputs, the last block's replay key.
  std::unique_ptr<BlockGraph> graph_;
  at::Tensor graph_noise_, graph_actions_, graph_eps_, graph_reference_;
  model::RopeRotation graph_rope_;
  std::optional<uint64_t> last_key_;
  GraphStats graph_stats_;
};

}  // namespace wc::rollout
