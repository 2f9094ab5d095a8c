// The world-model Session: the neural game as a FrameSource. Each AR block runs k denoising
// steps and a committing clean pass through an AttentionPolicy, then decodes to RGBA8.
#pragma once

#include <ATen/ATen.h>

#include <cstdint>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "engine/attention/attention_policy.h"
#include "engine/model/model_config.h"
#include "engine/rollout/frame_source.h"

namespace wc::rollout {

// Note [Policy switch]
// A policy's caches are built only from what the clean passes commit: each block's clean frames
// x0, its actions, its AR block index and its context noise. The Session keeps those inputs for
// the first block (every windowed policy's sink) and the most recent `context_blocks` blocks, so
// switch_policy builds the new policy's caches by running those clean passes again, in order, at
// their original frame positions, without drawing noise: the generator, the frame index and the
// game go on. While no block has been dropped from that context (blocks since reset <=
// context_blocks + 1, or context_blocks = -1), the new policy receives bit-for-bit the commits
// it would have received from the start: for a policy whose state is what was committed (dense,
// tempcache), switching to the same policy and settings changes nothing. Later, the oldest kept
// blocks are encoded again with less history than they first saw (their own predecessors are
// gone): the new policy starts from the same frames, not identical K/V. The policies' stores
// expect consecutive blocks, so the new policy numbers the kept blocks 0, 1, ... and every later
// block likewise (the Session keeps the offset; RoPE positions stay the real ones). A cast policy
// (headcast, dummy, combined) starts uncast: it classifies during the re-commit when the context
// already fills its warm-up window, else after its warm-up as from a reset. A switch costs one
// clean pass per kept block (a one-time hitch); a kept block costs its frames' values
// (F x C x H x W), no K/V.

struct SessionOptions {
  std::string resolution;  // a named resolution of the config; "" = its default frame
  // Real frames of the reference game (world seed = the session seed, action none) committed
  // as context on every reset, a whole number of blocks; 0 = the first block comes from noise.
  int seed_frames = 1;
  std::optional<at::ScalarType> dtype;  // default: float32 on CPU, bfloat16 on CUDA
  uint64_t weights_seed = 0;            // random initialisation when no weights path is given
  // Blocks kept besides the first for switch_policy (See Note [Policy switch]); -1 = all since
  // reset. The default matches the default window (sink block + 6 rolling blocks).
  int context_blocks = 6;
  // Replay each block from a CUDA graph once the policy allows it (Note [Block graph] in
  // block_graph.h); CUDA devices only. Off: every forward runs eagerly.
  bool cuda_graphs = true;
};

struct SessionStats {
  uint64_t frame_index = 0;
  int64_t blocks = 0;          // blocks generated since reset (seed blocks excluded)
  double model_ms = 0.0;       // last block: all DiT forwards (k steps + clean pass)
  double decode_ms = 0.0;      // last block: decode to RGBA8
  double mean_model_ms = 0.0;  // over the blocks since reset
  double mean_decode_ms = 0.0;
  int64_t context_blocks = 0;    // blocks a policy switch would commit again (first block included)
  double switch_ms = 0.0;        // the last switch_policy / context re-commit
  int64_t graph_recordings = 0;  // block graphs recorded by the current policy's sampler
  int64_t graph_replayed_blocks = 0;  // ... and blocks it replayed (Note [Block graph])
  attention::PolicyStats policy;
};

// Note [Memory budget] (engine/model/memory_budget.h): throws model::OutOfMemory when a Session
// of `config` at `size` under the policy (its window from `policy_settings` over the config's
// own) cannot fit on `device` in `dtype`. Session::create calls it before allocating anything;
// a caller that builds other things for the Session first (the plugin's policy check) calls it
// before those.
void require_session_memory(const model::ModelConfig& config, const model::FrameSize& size,
                            const std::string& policy_name, const nlohmann::json& policy_settings,
                            at::Device device, at::ScalarType dtype);

class Session : public FrameSource {
 public:
  // `weights`: a checkpoint path, or "" for random weights (options.weights_seed).
  // `seed` seeds the noise (own generator) and the seeding game's world. Throws wc::Error for a
  // bad checkpoint, an unknown policy or bad settings, or a config this Session cannot decode
  // (pixel space with 3 channels is required).
  static std::unique_ptr<Session> create(const model::ModelConfig& config,
                                         const std::string& weights, const std::string& policy_name,
                                         const nlohmann::json& policy_settings, uint64_t seed,
                                         at::Device device, const SessionOptions& options = {});
  ~Session() override;

  // FrameSource
  std::string name() const override;
  int width() const override;
  int height() const override;
  void reset(uint64_t seed) override;
  // One frame under `action`. With one frame per block this generates a block; with F frames
  // per block a block is generated (the action held for its F frames) when the previous
  // block's frames are used up, else the next generated frame is shown.
  void step(Action action) override;
  const uint8_t* rgba() const override;
  uint64_t frame_index() const override;

  // One whole block with one action per frame (actions.size() == frames_per_block); rgba()
  // shows its last frame afterwards.
  void step_block(const std::vector<Action>& actions);

  // The last generated (or seeded) block's clean frames, [F, C, H, W] float32 on the CPU.
  at::Tensor last_block() const;

  // Frames where the model made them (no copy): the device the model runs on, the current frame
  // (the one rgba() shows) as [3, H, W] and the last block as [F, 3, H, W], in the model's dtype
  // on device(). The CUDA frame path converts these directly. Valid until the next step/reset.
  at::Device device() const;
  at::Tensor frame_on_device() const;
  at::Tensor last_block_on_device() const;
  // Whether each block is copied to the host and decoded to RGBA8 as soon as it is made (the
  // default). Off: rgba() and last_block() do that on first use instead, so a consumer of
  // frame_on_device() alone (the CUDA frame path) costs no device-to-host copy. rgba() and
  // last_block() then modify the Session: call them from the thread that steps it.
  void set_host_frames(bool eager);

  // Saves what reproduces this rollout exactly: seed, policy and settings, the action log, the
  // frame position, and a hash of every block. Written atomically (safetensors layout).
  void save_state(const std::string& path) const;
  // Replays a saved state deterministically (same config, weights and device) and checks each
  // block against the saved hashes. Throws wc::Error naming the file and field for bad or
  // truncated files or a replay that diverges; the Session is unchanged then.
  void load_state(const std::string& path);

  // Live tuning, between blocks (the inference thread's commands). See Note [Policy switch].
  // Replaces the policy by `name` with `settings` without losing the game: the kept context
  // blocks are committed again through the new policy. Throws wc::Error for an unknown policy
  // or bad settings; the Session is unchanged then.
  void switch_policy(const std::string& name, const nlohmann::json& settings);
  // Applies `settings` (some keys of the policy) to the running policy and keeps them for
  // reset(). Keys a policy cannot take live (combined's headcast keys after the first block)
  // are applied by a switch to the same policy with the merged settings. Throws wc::Error for
  // bad keys or values; the Session is unchanged then.
  void configure_policy(const nlohmann::json& settings);
  // The policy's reclassify(); when that dropped the history, the context is committed again.
  void reclassify_policy();
  const std::string& policy_name() const;
  const nlohmann::json& policy_settings() const;
  // Note [Play settings], live from the next block on: the values now (the config's until
  // configured; an empty object for a model that has none), and `settings` (some of their keys)
  // applied and kept across reset(), switch_policy() and load_state(), which replays under them.
  // Throws wc::Error naming the key for a bad one; the Session is unchanged then.
  const nlohmann::json& play_settings() const;
  void configure_play(const nlohmann::json& settings);

  SessionStats stats() const;
  attention::AttentionPolicy& policy();
  const model::ModelConfig& config() const;

 private:
  struct Impl;
  struct Rollout;
  explicit Session(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace wc::rollout
