// Batches of training clips made on the fly by worker threads (the reference game renders tens of
// thousands of frames per second per core, so recording to disk first buys nothing). Batch n is
// a pure function of (seed, n): a resumed run sees exactly the batches it would have seen.
#pragma once

#include <ATen/ATen.h>

#include <condition_variable>
#include <cstdint>
#include <deque>
#include <map>
#include <mutex>
#include <thread>
#include <vector>

#include "engine/train/training_clip.h"

namespace wc::train {

struct ClipBatch {
  int64_t index = 0;
  at::Tensor frames;     // [B, F, 3, H, W] float32 in [−1, 1], CPU
  at::Tensor actions;    // [B, F] int64
  at::Tensor positions;  // [B, F] int64 absolute frame indices
  at::Tensor quarters;   // [B, F] int64 top-left tile quarters (Note [Tile quarters], dit.h)
  // With ClipSpec::ground: [B, F, 3, rows·16, cols·16] uint8 RGB of each frame's ground window
  // and [B, F, 2] int64 the tile (x, y) at its top left (training_clip.h); else undefined.
  at::Tensor ground;
  at::Tensor origins;
};

// The batch's frames as the RGB bytes the game drew ([B, F, H, W, 3] uint8, contiguous): frames
// are byte / 127.5 − 1, channels first.
at::Tensor frame_bytes(const ClipBatch& batch);

// The batch of `index`: clips seeded from (seed, index, row).
ClipBatch make_clip_batch(const ClipSpec& spec, int batch_size, uint64_t seed, int64_t index);

class ClipStream {
 public:
  // Starts `workers` threads that prepare batches first_index, first_index + 1, ... ahead.
  ClipStream(ClipSpec spec, int batch_size, uint64_t seed, int64_t first_index, int workers,
             int prefetch = 8);
  ~ClipStream();
  ClipStream(const ClipStream&) = delete;
  ClipStream& operator=(const ClipStream&) = delete;

  // The next batch in index order (blocks until it is ready). A worker's exception is rethrown.
  ClipBatch next();

 private:
  void work();

  ClipSpec spec_;
  int batch_size_;
  uint64_t seed_;
  int prefetch_;
  std::mutex mutex_;
  std::condition_variable changed_;
  int64_t next_to_make_;
  int64_t next_to_return_;
  std::map<int64_t, ClipBatch> ready_;
  std::exception_ptr failure_;
  bool stopping_ = false;
  std::vector<std::thread> threads_;
};

}  // namespace wc::train
