// See session.h. All mutable rollout state lives in one Rollout object, so reset() and
// load_state() build a new one and swap it in only when it is complete (never a partial state).
#include "engine/rollout/session.h"

#include <ATen/CPUGeneratorImpl.h>
#include <torch/autograd.h>
#include <torch/cuda.h>

#include <algorithm>
#include <cstring>
#include <deque>
#include <limits>

#include "engine/attention/headcast/cast_settings.h"
#include "engine/attention/registry.h"
#include "engine/core/error.h"
#include "engine/core/timing.h"
#include "engine/game/game.h"
#include "engine/model/dit.h"
#include "engine/model/memory_budget.h"
#include "engine/model/play_settings.h"
#include "engine/model/prediction.h"
#include "engine/model/weights.h"
#include "engine/rollout/cpu_allocator.h"
#include "engine/rollout/decode.h"
#include "engine/rollout/sampler.h"
#include "engine/rollout/session_state.h"

namespace wc::rollout {

// Note [Block hash]
// Computed where the block is, with no copy to the host and no sync (the CUDA frame path never
// reads a block back), from integer ops only, so CPU and CUDA give the same value for the same
// bits: the float32 bit patterns weighted by position and summed modulo two primes below 2^31
// (every product and partial sum fits in int64). Changing any one value changes it.
at::Tensor block_hash(const at::Tensor& block) {  // declared in session_state.h
  struct Lane {
    int64_t prime, multiplier, offset;
  };
  constexpr Lane kLanes[] = {{2147483647, 1103515245, 12345}, {2147483629, 1664525, 1013904223}};
  const at::Tensor bits = block.to(at::kFloat)
                              .contiguous()
                              .view(at::kInt)
                              .reshape({-1})
                              .to(at::kLong)
                              .bitwise_and(int64_t{0xffffffff});
  const at::Tensor index = at::arange(bits.numel(), bits.options());
  at::Tensor hash = at::zeros({}, bits.options());
  for (const Lane& lane : kLanes) {
    const at::Tensor weight = (index * lane.multiplier + lane.offset).remainder(lane.prime);
    const at::Tensor sum = (bits.remainder(lane.prime) * weight).remainder(lane.prime).sum();
    hash = hash * lane.prime + sum.remainder(lane.prime);
  }
  return hash;
}

uint64_t hash_block(const at::Tensor& block) {  // declared in session_state.h
  return static_cast<uint64_t>(block_hash(block).item<int64_t>());
}

// What one clean pass committed; See Note [Policy switch].
struct ContextBlock {
  at::Tensor x0;       // [1, F, C, H, W], model device and dtype
  at::Tensor actions;  // [1, F] int64
  at::Tensor eps;      // context noise, undefined when the config has none
  int64_t block_index = 0;
  at::Tensor quarters;  // [1, F] tile quarters (Note [Tile quarters]); undefined without them
};

struct Session::Rollout {
  uint64_t seed = 0;
  std::unique_ptr<attention::AttentionPolicy> policy;
  std::unique_ptr<BlockSampler> sampler;
  at::Generator generator;
  int64_t next_block = 0;        // AR block index of the next block (seed blocks included)
  int64_t generated_blocks = 0;  // blocks generated since reset
  std::vector<int64_t> actions;  // one per generated frame
  std::vector<uint64_t> hashes;  // one per generated block, see resolve_hashes
  std::vector<at::Tensor> pending_hashes;  // block_hash values not yet read back
  at::Tensor block_device;                 // last block, model device and dtype [F, C, H, W]
  at::Tensor block;                        // the same, CPU float32 (lazy: see host_frames)
  at::Tensor rgba;                         // its frames, uint8 [F, H, W, 4] (lazy likewise)
  bool host_stale = false;                 // block/rgba not yet made from block_device
  int shown = 0;                           // which frame of the block is current
  uint64_t frame_index = 0;
  double model_ms = 0.0, decode_ms = 0.0, model_ms_sum = 0.0, decode_ms_sum = 0.0;
  std::optional<ContextBlock> first_block;
  std::deque<ContextBlock> recent_blocks;  // at most options.context_blocks (-1: all)
  double switch_ms = 0.0;
  // Blocks the current policy never saw (dropped before a switch): it numbers blocks from its
  // first re-committed one, as its stores expect consecutive blocks. See Note [Policy switch].
  int64_t policy_offset = 0;
};

struct Session::Impl {
  model::ModelConfig config;
  SessionOptions options;
  model::FrameSize size;
  at::Device device = at::kCPU;
  at::ScalarType dtype = at::kFloat;
  model::CausalDiT model{nullptr};
  std::string policy_name;
  nlohmann::json policy_settings;
  attention::ModelShape shape;
  std::unique_ptr<Rollout> rollout;
  bool host_frames = true;  // see Session::set_host_frames
  // The play settings now (see Session::configure_play); every new sampler gets them.
  nlohmann::json play_settings = nlohmann::json::object();

  int frames_per_block() const { return config.frames_per_block; }

  void sync() const {
    if (device.is_cuda()) torch::cuda::synchronize();
  }

  at::Tensor draw_noise(Rollout& r) const {
    const at::Tensor noise =
        at::randn({1, config.frames_per_block, config.channels, size.height, size.width},
                  r.generator, at::kFloat);
    // A token model reads its draws from the noise (Note [Masked sampling]): float32 keeps
    // their resolution.
    return config.tokens.active() ? noise.to(device) : noise.to(device, dtype);
  }

  at::Tensor action_tensor(const int64_t* actions) const {
    return at::tensor(std::vector<int64_t>(actions, actions + frames_per_block()), at::kLong)
        .view({1, frames_per_block()})
        .to(device);
  }

  at::Tensor draw_context_noise(Rollout& r) const {
    return config.sampler.context_noise > 0.0 ? draw_noise(r) : at::Tensor();
  }

  void commit_block(Rollout& r, const at::Tensor& x0, const at::Tensor& actions) const {
    const at::Tensor eps = draw_context_noise(r);
    r.sampler->commit(x0, actions, r.next_block - r.policy_offset,
                      r.next_block * frames_per_block(), eps);
    keep_block(r, x0, actions, eps);
  }

  // The block's clean-pass inputs go into the context kept for policy switches.
  void keep_block(Rollout& r, const at::Tensor& x0, const at::Tensor& actions,
                  const at::Tensor& eps) const {
    const at::Tensor& quarters = r.sampler->committed_quarters();
    ContextBlock kept{x0, actions, eps, r.next_block,
                      quarters.defined() ? quarters.clone() : at::Tensor()};
    if (r.next_block == 0) {
      r.first_block = std::move(kept);
    } else if (options.context_blocks != 0) {
      r.recent_blocks.push_back(std::move(kept));
      const auto limit = static_cast<size_t>(options.context_blocks);
      if (options.context_blocks > 0 && r.recent_blocks.size() > limit) {
        r.recent_blocks.pop_front();
      }
    }
    ++r.next_block;
  }

  // A sampler of the model through `policy`, drawing tokens as the Session does now (a switch or
  // a reset keeps the live settings, not the config's).
  std::unique_ptr<BlockSampler> make_sampler(attention::AttentionPolicy& policy) const {
    auto sampler = std::make_unique<BlockSampler>(*model.ptr(), policy, size, options.cuda_graphs);
    sampler->configure_play(play_settings);
    return sampler;
  }

  // The kept clean passes again, through `sampler` (a new policy's), in their original order
  // and at their original frame positions, numbered 0, 1, ... for the policy. Returns the
  // policy offset from then on.
  int64_t recommit_context(const Rollout& r, BlockSampler& sampler) const {
    int64_t policy_block = 0;
    const auto recommit = [&](const ContextBlock& b) {
      sampler.commit(b.x0, b.actions, policy_block++, b.block_index * frames_per_block(), b.eps,
                     b.quarters);
    };
    if (r.first_block) recommit(*r.first_block);
    for (const ContextBlock& b : r.recent_blocks) recommit(b);
    sync();
    return r.next_block - policy_block;
  }

  // `block` [F, C, H, W] on the model's device becomes the shown block; its host copy and RGBA8
  // are made now, or on first use when host frames are off (the CUDA frame path).
  void show(Rollout& r, const at::Tensor& block) const {
    r.block_device = block;
    r.host_stale = true;
    r.decode_ms = 0.0;
    r.shown = frames_per_block() - 1;
    if (host_frames) make_host_frames(r);
  }

  void make_host_frames(Rollout& r) const {
    if (!r.host_stale) return;
    Stopwatch decode;
    r.block = r.block_device.to(at::kCPU, at::kFloat).contiguous();
    r.rgba = decode_rgba(r.block);
    r.decode_ms = decode.elapsed_ms();
    r.host_stale = false;
  }

  // Reads the pending block hashes back (one copy for all of them). See Note [Block hash].
  static void resolve_hashes(Rollout& r) {
    if (r.pending_hashes.empty()) return;
    const at::Tensor values = at::stack(r.pending_hashes).to(at::kCPU);
    for (int64_t i = 0; i < values.numel(); ++i) {
      r.hashes.push_back(static_cast<uint64_t>(values[i].item<int64_t>()));
    }
    r.pending_hashes.clear();
  }

  // A fresh rollout: its own policy and generator, seeded with real frames if configured.
  std::unique_ptr<Rollout> make_rollout(uint64_t seed, const std::string& name,
                                        const nlohmann::json& settings) const {
    auto r = std::make_unique<Rollout>();
    r->seed = seed;
    // Note [Model policy settings]: the model's own settings under the caller's.
    r->policy = attention::create_policy(name, shape, config.policy_settings(name, settings));
    r->sampler = make_sampler(*r->policy);
    r->generator = at::detail::createCPUGenerator(seed);
    // Black until a block exists: -1 decodes to 0 on both frame paths.
    r->block = at::full({frames_per_block(), config.channels, size.height, size.width}, -1.0);
    r->block_device = r->block.to(device, dtype);
    r->rgba = at::zeros({frames_per_block(), size.height, size.width, 4}, at::kByte);
    r->rgba.select(3, 3).fill_(255);
    r->shown = frames_per_block() - 1;
    if (options.seed_frames > 0) seed_from_game(*r);
    return r;
  }

  void seed_from_game(Rollout& r) const {
    game::GameConfig game_config;
    game_config.width = size.width;
    game_config.height = size.height;
    game_config.seed = r.seed;
    game::Game game(game_config);
    const int f = frames_per_block();
    const std::vector<int64_t> none(static_cast<size_t>(f), 0);
    for (int start = 0; start < options.seed_frames; start += f) {
      std::vector<at::Tensor> frames;
      for (int i = 0; i < f; ++i) {
        if (start + i > 0) game.step(game::Action::kNone);
        frames.push_back(encode_rgba(game.frame().data(), size.width, size.height));
      }
      const at::Tensor block = at::stack(frames).to(device, dtype);  // [F, 3, H, W]
      commit_block(r, block.unsqueeze(0), action_tensor(none.data()));
      show(r, block);
    }
  }

  // The frame before the next block, for each of its frames (Note [Previous-frame skip]): the
  // last shown block's last frame (black before any). Undefined for models without the skip.
  at::Tensor reference(const Rollout& r) const {
    if (!config.prediction.previous_frame_skip) return at::Tensor();
    return model::block_reference(r.block_device.unsqueeze(0), frames_per_block());
  }

  // One generated block under `actions` (F values).
  void generate(Rollout& r, const int64_t* actions) const {
    Stopwatch model_time;
    const at::Tensor a = action_tensor(actions);
    // Noise, then context noise: the order in which the generator has always drawn them.
    const at::Tensor noise = draw_noise(r);
    const at::Tensor eps = draw_context_noise(r);
    const at::Tensor x0 = r.sampler->generate(noise, a, r.next_block - r.policy_offset,
                                              r.next_block * frames_per_block(), eps, reference(r));
    keep_block(r, x0, a, eps);
    sync();
    r.model_ms = model_time.elapsed_ms();
    show(r, x0.squeeze(0));
    r.actions.insert(r.actions.end(), actions, actions + frames_per_block());
    r.pending_hashes.push_back(block_hash(r.block_device));
    ++r.generated_blocks;
    r.model_ms_sum += r.model_ms;
    r.decode_ms_sum += r.decode_ms;
  }
};

Session::Session(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
Session::~Session() = default;

namespace {

// Note [Memory budget]: the frames of cache a policy's resolved settings keep at
// `tokens_per_frame` tokens a frame: the largest limit they name ("window", "budget_frames",
// "budget" in entries per head, rounded up to frames), else `default_frames` (what every policy
// keeps when none is named). An unbounded cache ("window": 0, "budget": 0) counts as the default
// too: its growth is not known when the session starts.
int64_t policy_cache_frames(const nlohmann::json& settings, int64_t tokens_per_frame,
                            int64_t default_frames) {
  if (!settings.is_object()) return default_frames;
  const auto count = [&](const char* key) -> int64_t {
    const auto it = settings.find(key);
    if (it == settings.end() || !it->is_number_integer()) return 0;
    if (it->is_number_unsigned()) {
      return static_cast<int64_t>(
          std::min<uint64_t>(it->get<uint64_t>(), std::numeric_limits<int64_t>::max()));
    }
    return std::max<int64_t>(0, it->get<int64_t>());
  };
  const int64_t budget = count("budget");
  const int64_t budget_in_frames =
      tokens_per_frame > 0 ? budget / tokens_per_frame + (budget % tokens_per_frame != 0) : 0;
  const int64_t named = std::max({count("window"), count("budget_frames"), budget_in_frames});
  return named > 0 ? named : default_frames;
}

}  // namespace

void require_session_memory(const model::ModelConfig& config, const model::FrameSize& size,
                            const std::string& policy_name, const nlohmann::json& policy_settings,
                            at::Device device, at::ScalarType dtype) {
  const nlohmann::json settings = config.policy_settings(
      policy_name, policy_settings.is_null() ? nlohmann::json::object() : policy_settings);
  attention::ModelShape shape;
  shape.geometry = {config.frames_per_block, config.grid_h(size), config.grid_w(size)};
  const int64_t frames = policy_cache_frames(settings, shape.geometry.tokens_per_frame(),
                                             attention::default_cast_settings(shape).window);
  model::require_memory(config.file.empty() ? config.name : config.file,
                        model::play_memory(config, size, dtype, device, frames), device);
}

std::unique_ptr<Session> Session::create(const model::ModelConfig& config,
                                         const std::string& weights, const std::string& policy_name,
                                         const nlohmann::json& policy_settings, uint64_t seed,
                                         at::Device device, const SessionOptions& options) {
  const std::string where = config.file.empty() ? config.name : config.file;
  if (config.channels != 3) {
    throw Error(where,
                "the Session decodes pixel-space RGB models only (channels 3, no "
                "autoencoder); got channels " +
                    std::to_string(config.channels));
  }
  auto impl = std::make_unique<Impl>();
  impl->config = config;
  impl->options = options;
  impl->size = config.resolve(options.resolution);
  config.check_frame_size(impl->size);
  if (options.seed_frames < 0 || options.seed_frames % config.frames_per_block != 0) {
    throw Error(where, "seed_frames must be a whole number of blocks of " +
                           std::to_string(config.frames_per_block) + " frames");
  }
  if (options.context_blocks < -1) {
    throw Error(where, "context_blocks must be -1 (all) or >= 0, got " +
                           std::to_string(options.context_blocks));
  }
  impl->device = device;
  if (device.is_cpu()) keep_cpu_tensor_memory();
  impl->dtype = options.dtype.value_or(device.is_cuda() ? at::kBFloat16 : at::kFloat);
  require_session_memory(config, impl->size, policy_name, policy_settings, device, impl->dtype);
  impl->model = model::CausalDiT(config);
  if (weights.empty()) {
    model::init_random_weights(impl->model, options.weights_seed);
  } else {
    model::load_weights(impl->model, weights);
  }
  impl->model->to(device, impl->dtype);
  impl->model->eval();
  impl->policy_name = policy_name;
  impl->policy_settings = policy_settings.is_null() ? nlohmann::json::object() : policy_settings;
  impl->shape.num_layers = config.layers;
  impl->shape.num_heads = config.heads;
  impl->shape.head_dim = config.head_dim;
  impl->shape.batch = 1;
  impl->shape.geometry = {config.frames_per_block, config.grid_h(impl->size),
                          config.grid_w(impl->size)};
  impl->shape.device = device;
  impl->shape.dtype = impl->dtype;
  impl->play_settings = model::play_values(config.tokens);
  impl->rollout = impl->make_rollout(seed, policy_name, impl->policy_settings);
  return std::unique_ptr<Session>(new Session(std::move(impl)));
}

std::string Session::name() const {
  return "model:" + impl_->config.name;
}
int Session::width() const {
  return impl_->size.width;
}
int Session::height() const {
  return impl_->size.height;
}

void Session::reset(uint64_t seed) {
  impl_->rollout = impl_->make_rollout(seed, impl_->policy_name, impl_->policy_settings);
}

void Session::step(Action action) {
  Rollout& r = *impl_->rollout;
  if (r.generated_blocks > 0 && r.shown + 1 < impl_->frames_per_block()) {
    ++r.shown;
  } else {
    const std::vector<int64_t> actions(static_cast<size_t>(impl_->frames_per_block()),
                                       static_cast<int64_t>(action));
    impl_->generate(r, actions.data());
    r.shown = 0;
  }
  ++r.frame_index;
}

void Session::step_block(const std::vector<Action>& actions) {
  if (static_cast<int>(actions.size()) != impl_->frames_per_block()) {
    throw Error("session", "step_block needs one action per frame of the block (" +
                               std::to_string(impl_->frames_per_block()) + ")");
  }
  std::vector<int64_t> values;
  for (Action action : actions) values.push_back(static_cast<int64_t>(action));
  Rollout& r = *impl_->rollout;
  // Frames of the previous block not yet shown are skipped: the new block follows it in time.
  impl_->generate(r, values.data());
  // Counting produced frames keeps frame_index = blocks · F, which load_state relies on.
  r.frame_index = static_cast<uint64_t>(r.generated_blocks * impl_->frames_per_block());
}

const uint8_t* Session::rgba() const {
  Rollout& r = *impl_->rollout;
  impl_->make_host_frames(r);
  return r.rgba.select(0, r.shown).data_ptr<uint8_t>();
}

at::Device Session::device() const {
  return impl_->device;
}

at::Tensor Session::frame_on_device() const {
  const Rollout& r = *impl_->rollout;
  return r.block_device.select(0, r.shown);
}

at::Tensor Session::last_block_on_device() const {
  return impl_->rollout->block_device;
}

void Session::set_host_frames(bool eager) {
  impl_->host_frames = eager;
  if (eager) impl_->make_host_frames(*impl_->rollout);
}

uint64_t Session::frame_index() const {
  return impl_->rollout->frame_index;
}

at::Tensor Session::last_block() const {
  impl_->make_host_frames(*impl_->rollout);
  return impl_->rollout->block.clone();
}

void Session::switch_policy(const std::string& name, const nlohmann::json& settings) {
  Stopwatch watch;
  const nlohmann::json object = settings.is_null() ? nlohmann::json::object() : settings;
  Rollout& r = *impl_->rollout;
  // Build and fill the new policy completely before touching the rollout (no partial state).
  auto policy =
      attention::create_policy(name, impl_->shape, impl_->config.policy_settings(name, object));
  auto sampler = impl_->make_sampler(*policy);
  const int64_t offset = impl_->recommit_context(r, *sampler);
  r.sampler = std::move(sampler);
  r.policy = std::move(policy);
  r.policy_offset = offset;
  impl_->policy_name = name;
  impl_->policy_settings = object;
  r.switch_ms = watch.elapsed_ms();
}

void Session::configure_policy(const nlohmann::json& settings) {
  if (!settings.is_object()) {
    throw Error("policy " + impl_->policy_name, "settings must be a JSON object");
  }
  nlohmann::json merged = impl_->policy_settings;
  merged.update(settings);
  try {
    impl_->rollout->policy->configure(settings);
  } catch (const Error& live_error) {
    // A key the policy cannot take live: rebuild it from the context with the merged settings.
    try {
      switch_policy(impl_->policy_name, merged);
    } catch (const Error&) {
      throw live_error;  // the settings themselves are bad: report the policy's own message
    }
    return;
  }
  impl_->policy_settings = std::move(merged);
}

void Session::reclassify_policy() {
  Rollout& r = *impl_->rollout;
  r.policy->reclassify();
  // Some policies restart from nothing (combined resets): give them the context back.
  if (r.policy->stats().total_tokens() == 0 && (r.first_block || !r.recent_blocks.empty())) {
    Stopwatch watch;
    r.policy_offset = impl_->recommit_context(r, *r.sampler);
    r.switch_ms = watch.elapsed_ms();
  }
}

const std::string& Session::policy_name() const {
  return impl_->policy_name;
}
const nlohmann::json& Session::policy_settings() const {
  return impl_->policy_settings;
}

const nlohmann::json& Session::play_settings() const {
  return impl_->play_settings;
}
void Session::configure_play(const nlohmann::json& settings) {
  BlockSampler& sampler = *impl_->rollout->sampler;
  sampler.configure_play(settings);  // throws first if it cannot
  impl_->play_settings = sampler.play_settings();
}

SessionStats Session::stats() const {
  const Rollout& r = *impl_->rollout;
  SessionStats stats;
  stats.frame_index = r.frame_index;
  stats.blocks = r.generated_blocks;
  stats.model_ms = r.model_ms;
  stats.decode_ms = r.decode_ms;
  if (r.generated_blocks > 0) {
    stats.mean_model_ms = r.model_ms_sum / static_cast<double>(r.generated_blocks);
    stats.mean_decode_ms = r.decode_ms_sum / static_cast<double>(r.generated_blocks);
  }
  stats.context_blocks = static_cast<int64_t>(r.recent_blocks.size()) + (r.first_block ? 1 : 0);
  stats.switch_ms = r.switch_ms;
  stats.graph_recordings = r.sampler->graph_stats().recordings;
  stats.graph_replayed_blocks = r.sampler->graph_stats().replayed_blocks;
  stats.policy = r.policy->stats();
  return stats;
}

attention::AttentionPolicy& Session::policy() {
  return *impl_->rollout->policy;
}
const model::ModelConfig& Session::config() const {
  return impl_->config;
}

void Session::save_state(const std::string& path) const {
  const Rollout& r = *impl_->rollout;
  SessionState state;
  state.config = impl_->config.name;
  state.resolution = {impl_->size.height, impl_->size.width};
  state.frames_per_block = impl_->frames_per_block();
  state.seed_frames = impl_->options.seed_frames;
  state.policy = impl_->policy_name;
  state.policy_settings = impl_->policy_settings;
  state.seed = r.seed;
  state.frame_index = r.frame_index;
  state.actions = r.actions;
  Impl::resolve_hashes(*impl_->rollout);
  state.block_hashes = r.hashes;
  write_session_state(path, state);
}

void Session::load_state(const std::string& path) {
  const SessionState state = read_session_state(path, impl_->config.num_actions);
  const auto mismatch = [&](const std::string& field, const std::string& saved,
                            const std::string& here) {
    throw Error(path, "field '" + field + "': saved for " + saved + ", this session has " + here);
  };
  if (state.config != impl_->config.name) mismatch("config", state.config, impl_->config.name);
  if (state.resolution.height != impl_->size.height ||
      state.resolution.width != impl_->size.width) {
    mismatch("resolution",
             std::to_string(state.resolution.height) + "x" + std::to_string(state.resolution.width),
             std::to_string(impl_->size.height) + "x" + std::to_string(impl_->size.width));
  }
  if (state.frames_per_block != impl_->frames_per_block()) {
    mismatch("frames_per_block", std::to_string(state.frames_per_block),
             std::to_string(impl_->frames_per_block()));
  }
  if (state.seed_frames != impl_->options.seed_frames) {
    mismatch("seed_frames", std::to_string(state.seed_frames),
             std::to_string(impl_->options.seed_frames));
  }
  std::unique_ptr<Rollout> r;
  try {
    r = impl_->make_rollout(state.seed, state.policy, state.policy_settings);
  } catch (const Error& error) {
    throw Error(path, std::string("field 'policy': ") + error.what());
  }
  // Replay: the same seed, noise draws, actions and policy give the same blocks (Note in
  // session_state.h on why the history is replayed rather than the caches serialised).
  const size_t f = static_cast<size_t>(impl_->frames_per_block());
  for (size_t b = 0; b < state.block_hashes.size(); ++b) {
    impl_->generate(*r, state.actions.data() + b * f);
    Impl::resolve_hashes(*r);
    if (r->hashes.back() != state.block_hashes[b]) {
      throw Error(path, "field 'block_hashes[" + std::to_string(b) +
                            "]': replay diverged from the saved rollout (different weights, "
                            "device, policy settings or token sampling?)");
    }
  }
  const uint64_t blocks = state.block_hashes.size();
  if (blocks > 0) r->shown = static_cast<int>(state.frame_index - (blocks - 1) * f) - 1;
  r->frame_index = state.frame_index;
  impl_->policy_name = state.policy;
  impl_->policy_settings = state.policy_settings;
  impl_->rollout = std::move(r);
}

}  // namespace wc::rollout
