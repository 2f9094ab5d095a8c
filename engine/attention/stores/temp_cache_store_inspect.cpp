// TempCacheStore's inspection: entry counts, counters and entries read back to the host for stats
// and tests. Everything here synchronises with the device, which is why it is kept out of
// temp_cache_store.cpp (the per-block path; see Note [TempCache slots]).
#include <ATen/ATen.h>

#include "engine/attention/biased_attention.h"
#include "engine/attention/stores/temp_cache_store.h"

namespace wc::attention {

int64_t TempCacheStore::max_entries() const {
  return table_.valid.narrow(1, 0, table_.capacity).sum(1).max().item<int64_t>();
}

int64_t TempCacheStore::merges() const {
  return table_.merges.item<int64_t>();
}

int64_t TempCacheStore::evictions() const {
  return table_.evictions.item<int64_t>();
}

std::vector<int64_t> TempCacheStore::entries_per_group() const {
  const at::Tensor sums =
      table_.valid.narrow(1, 0, table_.capacity).sum(1).view({batch_, groups_}).sum(0).cpu();
  return std::vector<int64_t>(sums.data_ptr<int64_t>(), sums.data_ptr<int64_t>() + groups_);
}

std::vector<double> TempCacheStore::count_sum_per_group() const {
  const int64_t cap = table_.capacity;
  const at::Tensor held = table_.counts.narrow(1, 0, cap) * table_.valid.narrow(1, 0, cap);
  const at::Tensor sums = held.sum(1).to(at::kDouble).view({batch_, groups_}).sum(0).cpu();
  return std::vector<double>(sums.data_ptr<double>(), sums.data_ptr<double>() + groups_);
}

int64_t TempCacheStore::bytes_per_entry() const {
  return 2 * padded_head_dim(head_dim_) * static_cast<int64_t>(options_.dtype().itemsize());
}

TempCacheStore::Entries TempCacheStore::entries(int row) const {
  const int64_t cap = table_.capacity;
  const at::Tensor valid = table_.valid[row].narrow(0, 0, cap).cpu();
  const at::Tensor slots = valid.nonzero().squeeze(1);
  const at::Tensor seq = table_.seq[row].narrow(0, 0, cap).cpu().index_select(0, slots);
  const at::Tensor order = slots.index_select(0, std::get<1>(seq.sort()));
  const auto pick = [&](const at::Tensor& column) {
    return column[row].narrow(0, 0, cap).cpu().index_select(0, order);
  };
  Entries e;
  e.keys = pick(table_.keys.narrow(2, 0, head_dim_)).to(at::kFloat);
  e.values = pick(table_.values.narrow(2, 0, head_dim_)).to(at::kFloat);
  e.counts = pick(table_.counts);
  e.last_frame = pick(table_.last_frame);
  e.sink = pick(table_.sink);
  return e;
}

}  // namespace wc::attention
