// See sampler.h.
#include "engine/rollout/sampler.h"

#include <limits>

#include <torch/autograd.h>

#include "engine/core/error.h"
#include "engine/model/dit.h"
#include "engine/model/play_settings.h"
#include "engine/model/prediction.h"
#include "engine/rollout/token_sampler.h"

namespace wc::rollout {

std::vector<double> flow_schedule(int steps, double shift) {
  std::vector<double> schedule;
  for (int i = 0; i < steps; ++i) {
    const double t = 1.0 - static_cast<double>(i) / steps;
    schedule.push_back(shift * t / (1.0 + (shift - 1.0) * t));
  }
  return schedule;
}

BlockSampler::BlockSampler(model::CausalDiTImpl& model, attention::AttentionPolicy& policy,
                           model::FrameSize size, bool cuda_graphs)
    : model_(model),
      policy_(policy),
      sampler_(model.config().sampler),
      schedule_(flow_schedule(sampler_.steps, sampler_.shift)) {
  const model::ModelConfig& config = model.config();
  config.check_frame_size(size);
  geometry_.frames = config.frames_per_block;
  geometry_.grid_h = config.grid_h(size);
  geometry_.grid_w = config.grid_w(size);
  const at::Device device = model.device();
  tokens_ = config.tokens;
  if (tokens_.tiles()) {
    tile_tokenizer_ = std::make_unique<model::TileTokenizer>(*tokens_.tile_book, device);
    place_bias_ = at::zeros(tile_tokenizer_->allowed().sizes(), at::TensorOptions().device(device))
                      .masked_fill(tile_tokenizer_->allowed().logical_not(),
                                   -std::numeric_limits<float>::infinity())
                      .to(model.dtype());
    // Note [Tile tokens]: the phase first, so the ground drawn after it knows whether the window
    // moved.
    first_places_ =
        at::zeros({place_bias_.size(0)}, at::TensorOptions().dtype(at::kBool).device(device));
    first_places_[tokens_.tile_book->ground_rows() * tokens_.tile_book->ground_cols()].fill_(true);
    set_token_schedule();
  } else if (tokens_.active()) {
    tokenizer_ = std::make_unique<model::Tokenizer>(*tokens_.codebook, device);
    set_token_schedule();
  }
  if (cuda_graphs && BlockGraph::available(device)) graph_ = std::make_unique<BlockGraph>();
}

BlockSampler::~BlockSampler() = default;

nlohmann::json BlockSampler::play_settings() const {
  return model::play_values(tokens_);
}

void BlockSampler::configure_play(const nlohmann::json& settings) {
  model::TokenConfig tokens = model::with_play_settings(tokens_, settings, "play settings");
  if (model::play_values(tokens) == model::play_values(tokens_)) return;
  const bool passes_changed = tokens.passes != tokens_.passes;
  tokens_ = std::move(tokens);
  if (passes_changed) set_token_schedule();
  forget_recording();
}

void BlockSampler::set_token_schedule() {
  schedule_.assign(1, 1.0);
  for (int k = 1; k < tokens_.passes; ++k) schedule_.push_back(stay_share(k - 1, tokens_.passes));
}

void BlockSampler::forget_recording() {
  // The recording holds run_denoise with the old setting, and its key (the policy's) does not
  // say which: a replay would go on with it. A fresh graph and no last key re-record the block
  // as after a reset (Note [Block graph]).
  if (graph_) graph_ = std::make_unique<BlockGraph>();
  last_key_.reset();
}

attention::StepInfo BlockSampler::step_info(int64_t block_index, int step, double t,
                                            bool clean) const {
  attention::StepInfo info;
  info.block_index = block_index;
  info.denoise_step = step;
  info.num_denoise_steps = static_cast<int>(schedule_.size());
  info.noise_level = t;
  info.clean_pass = clean;
  info.geometry = geometry_;
  return info;
}

bool BlockSampler::guided(int step) const {
  return sampler_.action_guidance != 1.0 &&
         (sampler_.action_guidance_steps == 0 || step < sampler_.action_guidance_steps);
}

attention::StepInfo BlockSampler::clean_step(int64_t block_index) const {
  return step_info(block_index, static_cast<int>(schedule_.size()), sampler_.context_noise,
                   /*clean=*/true);
}

at::Tensor BlockSampler::denoise(const at::Tensor& noise, const at::Tensor& actions,
                                 int64_t block_index, int64_t frame_start,
                                 const at::Tensor& reference) {
  torch::NoGradGuard no_grad;
  return run_denoise(noise, actions, block_index, frame_start, reference, nullptr);
}

void BlockSampler::commit(const at::Tensor& x0, const at::Tensor& actions, int64_t block_index,
                          int64_t frame_start, const at::Tensor& context_eps,
                          const at::Tensor& quarters) {
  torch::NoGradGuard no_grad;
  run_commit(x0, actions, block_index, frame_start, context_eps, nullptr, /*device_only=*/false,
             quarters);
}

at::Tensor BlockSampler::generate(const at::Tensor& noise, const at::Tensor& actions,
                                  int64_t block_index, int64_t frame_start,
                                  const at::Tensor& context_eps, const at::Tensor& reference) {
  torch::NoGradGuard no_grad;
  if (graph_) {
    // Replay when this key was recorded; record when the key held for two blocks in a row (a
    // warm-up whose stores still grow changes it every block and is never recorded).
    std::optional<uint64_t> key = policy_.block_replay_key(clean_step(block_index));
    const attention::CrossAttentionPolicy* cross = model_.cross_policy();
    if (cross != nullptr && !cross->replayable()) key.reset();
    const bool replay = key && ((graph_->recorded() && graph_->key() == *key) || last_key_ == key);
    last_key_ = key;
    if (replay) {
      return replay_block(*key, noise, actions, block_index, frame_start, context_eps, reference);
    }
  }
  const at::Tensor x0 = run_denoise(noise, actions, block_index, frame_start, reference, nullptr);
  run_commit(x0, actions, block_index, frame_start, context_eps, nullptr, /*device_only=*/false);
  return x0;
}

at::Tensor BlockSampler::run_denoise(const at::Tensor& noise, const at::Tensor& actions,
                                     int64_t block_index, int64_t frame_start,
                                     const at::Tensor& reference, const model::RopeRotation* rope) {
  if (tokenizer_ || tile_tokenizer_)
    return run_token_denoise(noise, actions, block_index, frame_start, rope);
  const model::PredictionConfig& prediction = model_.config().prediction;
  if (prediction.previous_frame_skip && !reference.defined()) {
    throw Error(model_.config().name,
                "the model's previous-frame skip needs the frame before "
                "the block, and none was given");
  }
  at::Tensor x = noise;
  const int64_t frames = noise.size(1);
  for (size_t i = 0; i < schedule_.size(); ++i) {
    const double t = schedule_[i];
    const double next = i + 1 < schedule_.size() ? schedule_[i + 1] : 0.0;
    const at::Tensor levels = at::full({1, frames}, t, at::TensorOptions().device(x.device()));
    model::FrameBatch batch{x, levels, actions, frame_start, at::Tensor()};
    batch.rope = rope;
    const attention::StepInfo step =
        step_info(block_index, static_cast<int>(i), t, /*clean=*/false);
    at::Tensor velocity = model_.forward_block(batch, policy_, step);
    if (guided(static_cast<int>(i))) {
      // Note [Action guidance]: the keyed pass goes first, so an online cast sees its queries.
      model::FrameBatch dropped = batch;
      dropped.actions = at::full_like(actions, sampler_.dropped_action);
      const at::Tensor unkeyed = model_.forward_block(dropped, policy_, step);
      velocity = unkeyed + sampler_.action_guidance * (velocity - unkeyed);
    }
    // After the blend: the skip is affine in its correction, so blending outputs blends the
    // velocities.
    velocity = model::velocity_from_output(prediction, velocity, x, levels, reference);
    x = x + (next - t) * velocity;
  }
  return x;
}

at::Tensor BlockSampler::run_token_denoise(const at::Tensor& noise, const at::Tensor& actions,
                                           int64_t block_index, int64_t frame_start,
                                           const model::RopeRotation* rope) {
  const int64_t frames = noise.size(1);
  const int64_t n = int64_t{geometry_.grid_h} * geometry_.grid_w;
  const int64_t mask_id = tokens_.vocab;
  const at::Tensor uniforms = token_uniforms(noise, tokens_.passes, n);
  at::Tensor tokens = at::full({1, frames, n}, mask_id,
                               at::TensorOptions().dtype(at::kLong).device(noise.device()));
  at::Tensor unsure;  // the first pass's unsure draws (Note [Masked sampling])
  for (int k = 0; k < tokens_.passes; ++k) {
    // The model sees the share of each frame still masked, as in training.
    const at::Tensor levels = (tokens == mask_id).to(at::kFloat).mean(-1);
    model::FrameBatch batch{tokens.view({1, frames, geometry_.grid_h, geometry_.grid_w}), levels,
                            actions, frame_start, at::Tensor()};
    batch.rope = rope;
    // Note [Tile quarters]: the frame being drawn has not yet scrolled, or not; after the first
    // pass its shown places have, and `followed` is where (Notes [Drawn quarters], [Tile passes]).
    const at::Tensor followed =
        k > 0 && quarter_.defined() && (tokens_.drawn_quarters || tokens_.tile_passes)
            ? model::follow_quarters(quarter_, quarter_tokens_, batch.frames)
            : at::Tensor();
    if (!model_.config().tile_quarters.empty()) {
      batch.quarters =
          tokens_.drawn_quarters && followed.defined() ? followed : at::full_like(actions, -1);
    }
    const double t = schedule_[static_cast<size_t>(k)];
    at::Tensor logits =
        model_.forward_block(batch, policy_, step_info(block_index, k, t, /*clean=*/false));
    if (place_bias_.defined()) logits = logits + place_bias_.to(logits.scalar_type());
    // Note [Tile passes]: the first pass takes the committed frame's grid.
    PassTiles tiles;
    if (tokens_.tile_passes && quarter_.defined()) {
      tiles.quarter = followed.defined() ? followed : quarter_.view({1, 1}).expand({1, frames});
      tiles.grid_w = geometry_.grid_w;
    }
    MaskedPass pass = masked_pass(tokens, logits, uniforms.select(0, k), mask_id,
                                  tokens_.temperature, tokens_.top_p, tokens_.sure,
                                  stay_share(k, tokens_.passes), unsure, tiles, first_places_);
    tokens = std::move(pass.tokens);
    unsure = std::move(pass.unsure);
  }
  last_tokens_ = tokens.view({1, frames, geometry_.grid_h, geometry_.grid_w});
  last_decoded_ = tile_tokenizer_ ? tile_tokenizer_->decode(last_tokens_, noise.scalar_type())
                                  : tokenizer_->decode(last_tokens_, noise.scalar_type());
  return last_decoded_;
}

at::Tensor BlockSampler::encode_frames(const at::Tensor& x0, int64_t frame_start,
                                       const at::Tensor& given) const {
  if (!tile_tokenizer_) return tokenizer_->encode(x0);
  at::Tensor quarters = given;
  if (!quarters.defined() && frame_start == 0 && x0.size(1) == 1) {
    const std::vector<int>& first = tokens_.first_quarter;
    quarters = at::full({1, 1}, first[0] * 2 + first[1],
                        at::TensorOptions().dtype(at::kLong).device(x0.device()));
  }
  return tile_tokenizer_->encode(x0, quarters);
}

at::Tensor BlockSampler::track_quarters(const at::Tensor& tokens, int64_t frame_start,
                                        const at::Tensor& given) {
  const int64_t frames = tokens.size(1);
  const auto longs = at::TensorOptions().dtype(at::kLong).device(tokens.device());
  at::Tensor quarters;
  if (given.defined()) {
    if (given.sizes() != at::IntArrayRef({1, frames})) {
      throw Error(model_.config().name, "a re-committed block's tile quarters must be [1, " +
                                            std::to_string(frames) + "]");
    }
    quarters = given.to(longs);
  } else if (frame_start == 0) {
    // The sink: where the game starts its camera (the config's "tile_quarters"); the block's
    // later frames follow from it.
    const std::vector<int>& first = model_.config().tile_quarters;
    const at::Tensor sink = at::full({1}, first[0] * 2 + first[1], longs);
    quarters = frames == 1
                   ? sink.view({1, 1})
                   : at::cat({sink.view({1, 1}), model::follow_quarters(sink, tokens.select(1, 0),
                                                                        tokens.slice(1, 1))},
                             1);
  } else if (quarter_.defined()) {
    quarters = model::follow_quarters(quarter_, quarter_tokens_, tokens);
  } else {
    throw Error(model_.config().name,
                "frame " + std::to_string(frame_start) +
                    " was committed with no frame before it: its tile quarters cannot be followed "
                    "(Note [Quarter tracking])");
  }
  // In place once allocated: a recorded commit writes the buffers a replay's next commit reads.
  const at::Tensor last = quarters.select(1, frames - 1);
  const at::Tensor last_tokens = tokens.select(1, frames - 1);
  if (quarter_.defined() && block_quarters_.sizes() == quarters.sizes()) {
    quarter_.copy_(last);
    quarter_tokens_.copy_(last_tokens);
    block_quarters_.copy_(quarters);
  } else {
    quarter_ = last.clone();
    quarter_tokens_ = last_tokens.clone();
    block_quarters_ = quarters.clone();
  }
  return block_quarters_;
}

void BlockSampler::run_commit(const at::Tensor& x0, const at::Tensor& actions, int64_t block_index,
                              int64_t frame_start, const at::Tensor& context_eps,
                              const model::RopeRotation* rope, bool device_only,
                              const at::Tensor& quarters) {
  if (tokenizer_ || tile_tokenizer_) {
    // The frame just drawn commits its own tokens; any other (a seed frame, a re-commit) is
    // encoded, exactly for frames made of codebook entries (Notes [Patch tokens], [Tile tokens]).
    const at::Tensor tokens = last_decoded_.defined() && x0.is_same(last_decoded_)
                                  ? last_tokens_
                                  : encode_frames(x0, frame_start, quarters);
    const at::Tensor levels = at::zeros({1, x0.size(1)}, at::TensorOptions().device(x0.device()));
    model::FrameBatch batch{tokens, levels, actions, frame_start, at::Tensor()};
    batch.rope = rope;
    if (!model_.config().tile_quarters.empty()) {
      batch.quarters = track_quarters(tokens, frame_start, quarters);
    }
    attention::StepInfo step = clean_step(block_index);
    step.commit_device_only = device_only;
    model_.forward_block(batch, policy_, step);
    return;
  }
  const double c = sampler_.context_noise;
  const at::Tensor input = c > 0.0 ? (1.0 - c) * x0 + c * context_eps : x0;
  const at::Tensor levels = at::full({1, x0.size(1)}, c, at::TensorOptions().device(x0.device()));
  model::FrameBatch batch{input, levels, actions, frame_start, at::Tensor()};
  batch.rope = rope;
  attention::StepInfo step = clean_step(block_index);
  step.commit_device_only = device_only;
  model_.forward_block(batch, policy_, step);
}

at::Tensor BlockSampler::replay_block(uint64_t key, const at::Tensor& noise,
                                      const at::Tensor& actions, int64_t block_index,
                                      int64_t frame_start, const at::Tensor& context_eps,
                                      const at::Tensor& reference) {
  const model::RopeRotation& rope =
      model_.rope_for(frame_start, geometry_.frames, geometry_.grid_h, geometry_.grid_w, noise);
  const bool record = !graph_->recorded() || graph_->key() != key;
  if (record) {
    graph_noise_ = at::empty_like(noise);
    graph_actions_ = at::empty_like(actions);
    graph_eps_ = context_eps.defined() ? at::empty_like(context_eps) : at::Tensor();
    graph_reference_ = reference.defined() ? at::empty_like(reference) : at::Tensor();
    graph_rope_ = {at::empty_like(rope.cos), at::empty_like(rope.sin_signed)};
  }
  graph_noise_.copy_(noise);
  graph_actions_.copy_(actions);
  if (graph_eps_.defined()) graph_eps_.copy_(context_eps);
  if (graph_reference_.defined()) graph_reference_.copy_(reference);
  graph_rope_.cos.copy_(rope.cos);
  graph_rope_.sin_signed.copy_(rope.sin_signed);
  // Note [Replayed commit]: the host half now; the recording holds the device half.
  policy_.commit_host(clean_step(block_index));
  if (record) {
    const auto denoise = [this, block_index, frame_start] {
      return run_denoise(graph_noise_, graph_actions_, block_index, frame_start, graph_reference_,
                         &graph_rope_);
    };
    graph_->record(key, denoise, [&] {
      const at::Tensor x0 = denoise();
      run_commit(x0, graph_actions_, block_index, frame_start, graph_eps_, &graph_rope_,
                 /*device_only=*/true);
      return x0;
    });
    ++graph_stats_.recordings;
  }
  ++graph_stats_.replayed_blocks;
  // The output buffer belongs to the recording: the next replay overwrites it.
  return graph_->replay().clone();
}

}  // namespace wc::rollout
