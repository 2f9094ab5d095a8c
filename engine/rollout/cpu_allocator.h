// Keeps glibc from handing large tensor buffers back to the OS after every op, which made CPU
// inference spend most of its time in page faults (see Note [CPU allocator] in the .cpp).
#pragma once

namespace wc::rollout {

// Process-wide and idempotent; a no-op where the C library is not glibc.
void keep_cpu_tensor_memory();

}  // namespace wc::rollout
