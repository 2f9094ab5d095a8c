// See clip_stream.h.
#include "engine/train/clip_stream.h"

#include <exception>
#include <utility>

#include "engine/game/world.h"

namespace wc::train {
namespace {

constexpr int64_t kTile = game::kTileSize;

uint64_t mix(uint64_t x) {  // splitmix64: independent seeds from consecutive integers
  x += 0x9E3779B97F4A7C15ull;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
  return x ^ (x >> 31);
}

}  // namespace

at::Tensor frame_bytes(const ClipBatch& batch) {
  return batch.frames.add(1.0)
      .mul(127.5)
      .round()
      .clamp(0, 255)
      .to(at::kByte)
      .movedim(2, -1)
      .contiguous();
}

ClipBatch make_clip_batch(const ClipSpec& spec, int batch_size, uint64_t seed, int64_t index) {
  const int64_t f = spec.frames, h = spec.height, w = spec.width;
  ClipBatch batch;
  batch.index = index;
  batch.frames = at::empty({batch_size, f, 3, h, w}, at::kFloat);
  batch.actions = at::empty({batch_size, f}, at::kLong);
  batch.positions = at::empty({batch_size, f}, at::kLong);
  batch.quarters = at::empty({batch_size, f}, at::kLong);
  float* frames = batch.frames.data_ptr<float>();
  int64_t* actions = batch.actions.data_ptr<int64_t>();
  int64_t* positions = batch.positions.data_ptr<int64_t>();
  int64_t* quarters = batch.quarters.data_ptr<int64_t>();
  const int64_t gh = int64_t{ground_rows(spec.height)} * kTile,
                gw = int64_t{ground_cols(spec.width)} * kTile;
  if (spec.ground) {
    batch.ground = at::empty({batch_size, f, 3, gh, gw}, at::kByte);
    batch.origins = at::empty({batch_size, f, 2}, at::kLong);
  }
  for (int b = 0; b < batch_size; ++b) {
    const Clip clip =
        record_clip(spec, mix(mix(seed) ^ mix(static_cast<uint64_t>(index) * 4099u + b)));
    if (spec.ground) {
      // RGBA8 HWC -> RGB bytes CHW.
      const at::Tensor rgba =
          at::from_blob(const_cast<uint8_t*>(clip.ground_rgba.data()), {f, gh, gw, 4}, at::kByte);
      batch.ground[b].copy_(rgba.slice(3, 0, 3).permute({0, 3, 1, 2}));
      batch.origins[b].copy_(at::tensor(clip.origins, at::kLong).view({f, 2}));
    }
    // RGBA8 HWC -> float CHW in [−1, 1], the encoding of rollout::encode_rgba.
    for (int64_t i = 0; i < f; ++i) {
      const uint8_t* src = clip.rgba.data() + i * h * w * 4;
      float* dst = frames + ((b * f + i) * 3) * h * w;
      for (int64_t p = 0; p < h * w; ++p) {
        for (int c = 0; c < 3; ++c) dst[c * h * w + p] = src[p * 4 + c] / 127.5f - 1.0f;
      }
      actions[b * f + i] = clip.actions[static_cast<size_t>(i)];
      positions[b * f + i] = clip.positions[static_cast<size_t>(i)];
      quarters[b * f + i] = clip.quarters[static_cast<size_t>(i)];
    }
  }
  return batch;
}

ClipStream::ClipStream(ClipSpec spec, int batch_size, uint64_t seed, int64_t first_index,
                       int workers, int prefetch)
    : spec_(std::move(spec)),
      batch_size_(batch_size),
      seed_(seed),
      prefetch_(prefetch),
      next_to_make_(first_index),
      next_to_return_(first_index) {
  for (int i = 0; i < workers; ++i) threads_.emplace_back([this] { work(); });
}

ClipStream::~ClipStream() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stopping_ = true;
  }
  changed_.notify_all();
  for (std::thread& thread : threads_) thread.join();
}

void ClipStream::work() {
  for (;;) {
    int64_t index = 0;
    {
      std::unique_lock<std::mutex> lock(mutex_);
      changed_.wait(lock, [&] {
        return stopping_ || failure_ || next_to_make_ < next_to_return_ + prefetch_;
      });
      if (stopping_ || failure_) return;
      index = next_to_make_++;
    }
    try {
      ClipBatch batch = make_clip_batch(spec_, batch_size_, seed_, index);
      std::lock_guard<std::mutex> lock(mutex_);
      ready_.emplace(index, std::move(batch));
    } catch (...) {
      std::lock_guard<std::mutex> lock(mutex_);
      failure_ = std::current_exception();
    }
    changed_.notify_all();
  }
}

ClipBatch ClipStream::next() {
  std::unique_lock<std::mutex> lock(mutex_);
  changed_.wait(lock, [&] { return failure_ || ready_.count(next_to_return_) > 0; });
  if (failure_) std::rethrow_exception(failure_);
  auto node = ready_.extract(next_to_return_++);
  lock.unlock();
  changed_.notify_all();
  return std::move(node.mapped());
}

}  // namespace wc::train
