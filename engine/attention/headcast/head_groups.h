// Gathering the heads of one type out of a layer's [B, H, ...] tensors and scattering results
// back in head order: a narrow when the heads are contiguous, one index_select / index_copy_ else.
#pragma once

#include <ATen/ATen.h>

#include <vector>

#include "engine/attention/replay_key.h"

namespace wc::attention {

// A layer's attention output [B, heads, T, D] (like q [B, *, T, D]) to be filled head group by
// head group, laid out token-major in memory ([B, T, heads, D] transposed): the model feeds it to
// the output projection as [B, T, heads·D], which is then a view, not a transposing copy.
inline at::Tensor empty_layer_output(const at::Tensor& q, int64_t heads) {
  return at::empty({q.size(0), q.size(2), heads, q.size(3)}, q.options()).transpose(1, 2);
}

class HeadSelection {
 public:
  HeadSelection() = default;
  HeadSelection(std::vector<int> heads, const at::Device& device);

  const std::vector<int>& heads() const { return heads_; }
  int size() const { return static_cast<int>(heads_.size()); }
  bool empty() const { return heads_.empty(); }
  // True when the heads are first, first+1, ... (a view suffices).
  bool contiguous() const { return contiguous_; }

  // x[:, heads] along `dim` (a view when contiguous, else a new tensor).
  at::Tensor gather(const at::Tensor& x, int64_t dim = 1) const;
  // out[:, heads] = src along `dim` (out may be a strided view).
  void scatter(at::Tensor& out, const at::Tensor& src, int64_t dim = 1) const;
  // What fixes gather/scatter's device work. See Note [Replayed attention].
  void add_to(ReplayKey& key) const { key.add(heads_).add(contiguous_ ? 1 : 0).add(index_); }

 private:
  std::vector<int> heads_;
  at::Tensor index_;  // int64 on the tensors' device
  bool contiguous_ = false;
};

}  // namespace wc::attention
