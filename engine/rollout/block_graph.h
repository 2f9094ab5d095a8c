// A whole AR block recorded once as a CUDA graph and replayed for later blocks.
// See Note [Block graph].
#pragma once

#include <ATen/ATen.h>

#include <cstdint>
#include <functional>
#include <memory>

namespace wc::rollout {

// Note [Block graph]
// A block of game-small (k denoising forwards and the committing clean pass) launches a few
// thousand small kernels; on a GPU the CPU's launch time, not the GPU, then sets the frame time,
// and every hiccup of the host shows in it (on the H200: 19 ms per frame eagerly, with stretches
// of 40-70 ms). Once the policy can replay a block (Note [Replayed commit]) and its key is the
// same as the last block's, the sampler records the block once into a CUDA graph and replays it
// for every later block with that key. Per block, the host copies what changes (noise, actions,
// context noise, the RoPE rotation of the block's frame positions) into the recording's static
// input buffers and runs the policy's commit_host (slot bookkeeping, slot indices to the
// device); the replay does the rest. A changed key (a policy switch, a re-cast, new settings, a
// reset, a window that still fills) means eager blocks until it holds again, then a new
// recording. Recording first runs the denoising forwards once, unrecorded, on the capture
// stream, so lazily made library handles and workspaces exist before capture; those forwards
// only rewrite the stores' current-block slots, which every pass writes before it reads them.
class BlockGraph {
 public:
  // Whether graphs can be recorded for tensors on `device`: a CUDA build and a CUDA device.
  static bool available(const at::Device& device);

  BlockGraph();
  ~BlockGraph();
  BlockGraph(const BlockGraph&) = delete;
  BlockGraph& operator=(const BlockGraph&) = delete;

  bool recorded() const;
  uint64_t key() const { return key_; }

  // Records `pass` under `key`, replacing any earlier recording. `pass` must read only buffers
  // that outlive the recording and return its output; nothing recorded runs until replay().
  // `warmup` runs once, unrecorded, on the capture stream first: work like pass's that changes
  // no state the pass reads (lazily made library handles and workspaces then exist).
  void record(uint64_t key, const std::function<at::Tensor()>& warmup,
              const std::function<at::Tensor()>& pass);
  // Runs the recording on the current stream; returns its output buffer, which the next
  // replay overwrites.
  at::Tensor replay();

 private:
  struct Recording;
  std::unique_ptr<Recording> recording_;
  uint64_t key_ = 0;
};

}  // namespace wc::rollout
