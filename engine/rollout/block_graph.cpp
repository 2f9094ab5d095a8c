// See block_graph.h and Note [Block graph]. Without WORLDCAST_HAS_CUDA nothing is available.
#include "engine/rollout/block_graph.h"

#include "engine/core/error.h"

#ifdef WORLDCAST_HAS_CUDA
#include <ATen/cuda/CUDAContext.h>
#include <ATen/cuda/CUDAEvent.h>
#include <ATen/cuda/CUDAGraph.h>
#include <c10/cuda/CUDAGuard.h>
#endif

namespace wc::rollout {

#ifdef WORLDCAST_HAS_CUDA
struct BlockGraph::Recording {
  at::cuda::CUDAGraph graph;
  at::Tensor output;
};

bool BlockGraph::available(const at::Device& device) {
  return device.is_cuda();
}

void BlockGraph::record(uint64_t key, const std::function<at::Tensor()>& warmup,
                        const std::function<at::Tensor()>& pass) {
  recording_.reset();  // the old graph and its memory pool go first
  auto recording = std::make_unique<Recording>();
  const at::cuda::CUDAStream current = at::cuda::getCurrentCUDAStream();
  // Capture needs a stream other than the default one; it starts after what the current stream
  // has queued (the inputs' copies) and the current stream resumes after it.
  const at::cuda::CUDAStream capture = at::cuda::getStreamFromPool(false, current.device_index());
  at::cuda::CUDAEvent inputs_ready;
  inputs_ready.record(current);
  inputs_ready.block(capture);
  {
    const c10::cuda::CUDAStreamGuard guard(capture);
    warmup();  // unrecorded: see Note [Block graph]
    // Thread-local mode: the render thread's own CUDA calls may go on during the capture.
    recording->graph.capture_begin({0, 0}, cudaStreamCaptureModeThreadLocal);
    recording->output = pass();
    recording->graph.capture_end();
  }
  at::cuda::CUDAEvent recorded;
  recorded.record(capture);
  recorded.block(current);
  recording_ = std::move(recording);
  key_ = key;
}

at::Tensor BlockGraph::replay() {
  if (!recording_) throw Error("block graph", "replay before record (internal error)");
  recording_->graph.replay();
  return recording_->output;
}
#else
struct BlockGraph::Recording {};

bool BlockGraph::available(const at::Device&) {
  return false;
}

void BlockGraph::record(uint64_t, const std::function<at::Tensor()>&,
                        const std::function<at::Tensor()>&) {
  throw Error("block graph", "this build has no CUDA graphs");
}

at::Tensor BlockGraph::replay() {
  throw Error("block graph", "this build has no CUDA graphs");
}
#endif

BlockGraph::BlockGraph() = default;
BlockGraph::~BlockGraph() = default;

bool BlockGraph::recorded() const {
  return recording_ != nullptr;
}

}  // namespace wc::rollout
