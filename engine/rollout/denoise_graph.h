// A block's denoising forwards recorded once as a CUDA graph and replayed for later blocks.
// See Note [Denoise graph].
#pragma once

#include <ATen/ATen.h>

#include <cstdint>
#include <functional>
#include <memory>

namespace wc::rollout {

// Note [Denoise graph]
// The k denoising forwards of a block launch a few thousand small kernels; on a GPU the CPU's
// launch time, not the GPU, then sets the frame time, and every hiccup of the host shows up in
// it (game-small on the H200: 19 ms per frame, with stretches of 40-70 ms). Once the policy's
// attention is replayable (Note [Replayed attention]) and its key is the same as the last
// block's, the sampler records the forwards once into a CUDA graph and replays them for every
// later block with that key: the values that change per block (noise, actions, the RoPE rotation
// of the block's frame positions) are copied into the recording's static input buffers first.
// The clean pass stays eager: it commits K/V and runs the policy's host-side bookkeeping. A
// changed key (a policy switch, a re-cast, new settings, a reset) records again. Recording runs
// the pass once unrecorded on the capture stream first, so lazily made library handles and
// workspaces exist before capture; that run only rewrites the stores' current-block slots,
// which every pass writes before reading.
class DenoiseGraph {
 public:
  // Whether graphs can be recorded for tensors on `device`: a CUDA build and a CUDA device.
  static bool available(const at::Device& device);

  DenoiseGraph();
  ~DenoiseGraph();
  DenoiseGraph(const DenoiseGraph&) = delete;
  DenoiseGraph& operator=(const DenoiseGraph&) = delete;

  bool recorded() const;
  uint64_t key() const { return key_; }

  // Records `pass` under `key`, replacing any earlier recording. `pass` must read only buffers
  // that outlive the recording and return its output; nothing recorded runs until replay().
  void record(uint64_t key, const std::function<at::Tensor()>& pass);
  // Runs the recording on the current stream; returns its output buffer, which the next
  // replay overwrites.
  at::Tensor replay();

 private:
  struct Recording;
  std::unique_ptr<Recording> recording_;
  uint64_t key_ = 0;
};

}  // namespace wc::rollout
