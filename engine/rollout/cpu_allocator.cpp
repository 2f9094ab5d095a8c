// See cpu_allocator.h.
#include "engine/rollout/cpu_allocator.h"

#include <cstdlib>  // defines __GLIBC__ (through features.h) where the C library is glibc

#if defined(__GLIBC__)
#include <malloc.h>
#endif

namespace wc::rollout {

// Note [CPU allocator]
// LibTorch's CPU allocator is malloc. glibc serves blocks above M_MMAP_THRESHOLD (128 KiB at
// first) with fresh mmaps and trims the heap top above M_TRIM_THRESHOLD, so the activations of
// every op (a few MiB each) are returned to the OS on free and page-faulted back in on the next
// allocation. On the game-small config that was >40% system time and about 4x slower blocks.
// Raising both thresholds keeps the working set mapped; the DiT's per-block working set is
// bounded, so the heap stops growing after the first blocks.
void keep_cpu_tensor_memory() {
#if defined(__GLIBC__)
  static const bool kDone = [] {
    mallopt(M_MMAP_THRESHOLD, 32 << 20);  // the largest value glibc accepts on 64-bit
    mallopt(M_TRIM_THRESHOLD, 1 << 30);
    mallopt(M_TOP_PAD, 64 << 20);
    return true;
  }();
  (void)kDone;
#endif
}

}  // namespace wc::rollout
