// See head_groups.h.
#include "engine/attention/headcast/head_groups.h"

#include "engine/attention/headcast/head_copy.h"

namespace wc::attention {

HeadSelection::HeadSelection(std::vector<int> heads, const at::Device& device)
    : heads_(std::move(heads)) {
  contiguous_ = !heads_.empty();
  for (size_t i = 1; i < heads_.size(); ++i) contiguous_ &= heads_[i] == heads_[i - 1] + 1;
  std::vector<int64_t> index(heads_.begin(), heads_.end());
  index_ = at::tensor(index, at::TensorOptions().dtype(at::kLong)).to(device);
}

at::Tensor HeadSelection::gather(const at::Tensor& x, int64_t dim) const {
  if (contiguous_) return x.narrow(dim, heads_.front(), size());
  if (dim == 1) {
    if (auto fast = gather_heads_fast(x, index_)) return *fast;
  }
  return x.index_select(dim, index_);
}

void HeadSelection::scatter(at::Tensor& out, const at::Tensor& src, int64_t dim) const {
  if (contiguous_) {
    out.narrow(dim, heads_.front(), size()).copy_(src);
  } else if (dim != 1 || !scatter_heads_fast(out, src, index_)) {
    out.index_copy_(dim, index_, src);
  }
}

}  // namespace wc::attention
