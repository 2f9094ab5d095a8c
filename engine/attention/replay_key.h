// The keys of Note [Replayed attention] (attention_policy.h): an order-sensitive mix of the values
// that fix a store's device work (buffer addresses, sizes, head lists, cell layout).
#pragma once

#include <ATen/ATen.h>

#include <cstdint>
#include <vector>

namespace wc::attention {

class ReplayKey {
 public:
  ReplayKey& add(uint64_t value) {
    // splitmix64's finaliser over the running value: every bit of every input moves the key.
    uint64_t z = (hash_ ^ value) + 0x9e3779b97f4a7c15ull;
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    hash_ = z ^ (z >> 31);
    return *this;
  }
  ReplayKey& add(const at::Tensor& buffer) {
    if (!buffer.defined()) return add(0);
    add(reinterpret_cast<uintptr_t>(buffer.data_ptr()));
    for (int64_t d = 0; d < buffer.dim(); ++d) add(static_cast<uint64_t>(buffer.size(d)));
    return *this;
  }
  ReplayKey& add(const std::vector<int>& values) {
    add(values.size());
    for (int v : values) add(static_cast<uint64_t>(v));
    return *this;
  }
  uint64_t value() const { return hash_; }

 private:
  uint64_t hash_ = 0;
};

}  // namespace wc::attention
