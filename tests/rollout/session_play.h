// Playing a Session in tests: a few blocks under changing keys.
#pragma once

#include <ATen/ATen.h>

#include <vector>

#include "engine/rollout/session.h"

namespace wc::rollout {

// `blocks` blocks under the keys none, up, down, left, right in turn; each block as generated.
inline std::vector<at::Tensor> play(Session& s, int blocks) {
  std::vector<at::Tensor> out;
  for (int i = 0; i < blocks; ++i) {
    s.step(static_cast<Action>(i % 5));
    out.push_back(s.last_block());
  }
  return out;
}

// Whether two plays gave the same blocks, bit for bit.
inline bool same_blocks(const std::vector<at::Tensor>& a, const std::vector<at::Tensor>& b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    if (!at::equal(a[i], b[i])) return false;
  }
  return true;
}

}  // namespace wc::rollout
