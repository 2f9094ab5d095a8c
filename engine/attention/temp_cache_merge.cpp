// See temp_cache_merge.h.
#include "engine/attention/temp_cache_merge.h"

#include <limits>

namespace wc::attention {
namespace {

at::Tensor slot_index(const EntryTable& t, int64_t count) {
  const int64_t rows = t.sizes.size(0);
  return at::arange(count, t.sizes.options()).unsqueeze(0).expand({rows, count});
}

at::Tensor expand_last(const at::Tensor& index, int64_t dims) {
  std::vector<int64_t> sizes = index.sizes().vec();
  sizes.push_back(dims);
  return index.unsqueeze(-1).expand(sizes);
}

// Moves the entries where `keep` is true to the front in order (gather by a stable order), zeroes
// the rest, and remaps `colocated` through `remap` (old slot -> new slot, -1 = gone).
void compact(EntryTable& t, const at::Tensor& keep, const at::Tensor& remap) {
  const int64_t cap = t.capacity;
  const at::Tensor slots = slot_index(t, cap);
  const at::Tensor order = std::get<1>(at::where(keep, slots, slots + cap).sort(1));
  const at::Tensor new_sizes = keep.sum(1);
  const at::Tensor free = slots.ge(new_sizes.unsqueeze(1));
  const int64_t dp = t.keys.size(2);
  for (at::Tensor* buffer : {&t.keys, &t.values}) {
    at::Tensor region = buffer->narrow(1, 0, cap);
    region.copy_(region.gather(1, expand_last(order, dp)).masked_fill_(free.unsqueeze(-1), 0));
  }
  at::Tensor counts = t.counts.narrow(1, 0, cap);
  counts.copy_(counts.gather(1, order).masked_fill_(free, 0));
  at::Tensor last = t.last_frame.narrow(1, 0, cap);
  last.copy_(last.gather(1, order).masked_fill_(free, 0));
  at::Tensor sink = t.sink.narrow(1, 0, cap);
  sink.copy_(sink.gather(1, order).masked_fill_(free, false));
  at::Tensor codes = t.codes.narrow(1, 0, cap);
  codes.copy_(codes.gather(1, order).masked_fill_(free, 0));
  const at::Tensor seen = t.colocated.ge(0);
  t.colocated = at::where(seen, remap.gather(1, t.colocated.clamp_min(0)),
                          at::full({}, int64_t{-1}, t.colocated.options()));
  t.sizes = new_sizes;
}

}  // namespace

int64_t apply_frame(EntryTable& t, const at::Tensor& k, const at::Tensor& v,
                    const at::Tensor& codes, const at::Tensor& target, int64_t frame, bool sink) {
  const int64_t rows = k.size(0);
  const int64_t n = k.size(1);
  const int64_t d = t.head_dim;
  const int64_t trash = t.capacity;
  const auto long_options = t.sizes.options();
  const at::Tensor token = at::arange(n, long_options).unsqueeze(0).expand({rows, n});
  const at::Tensor merged = target.ge(0);
  const at::Tensor goal = at::where(merged, target, at::full({}, trash, long_options));
  // One key per entry and frame: the newest (largest token index) wins.
  const at::Tensor newest =
      at::full({rows, trash + 1}, int64_t{-1}, long_options).scatter_reduce(1, goal, token, "amax");
  const at::Tensor winner = merged.logical_and(newest.gather(1, goal).eq(token));
  const at::Tensor append = winner.logical_not();
  const at::Tensor appended_slot = t.sizes.unsqueeze(1) + append.to(at::kLong).cumsum(1) - 1;
  const at::Tensor dest = at::where(winner, goal, appended_slot);  // unique per row

  const at::Tensor n_new =
      at::where(winner, t.counts.gather(1, goal) + 1.0f, at::ones({}, t.counts.options()));
  const at::Tensor v_old = t.values.narrow(2, 0, d).gather(1, expand_last(goal, d)).to(at::kFloat);
  const at::Tensor vf = v.to(at::kFloat);
  const at::Tensor v_new =
      at::where(winner.unsqueeze(-1), v_old + (vf - v_old) / n_new.unsqueeze(-1), vf);
  const at::Tensor d_index = expand_last(dest, d);
  t.keys.narrow(2, 0, d).scatter_(1, d_index, k.to(t.keys.scalar_type()));
  t.values.narrow(2, 0, d).scatter_(1, d_index, v_new.to(t.values.scalar_type()));
  t.counts.scatter_(1, dest, n_new);
  t.last_frame.scatter_(1, dest, at::full({rows, n}, frame, long_options));
  const at::Tensor sink_flag =
      at::where(winner, t.sink.gather(1, goal), at::full({}, sink, t.sink.options()));
  t.sink.scatter_(1, dest, sink_flag);
  t.codes.scatter_(1, dest, codes);
  t.sizes = t.sizes + append.sum(1);
  t.colocated = dest;
  return winner.sum().item<int64_t>();
}

int64_t drop_entries(EntryTable& t, const at::Tensor& drop) {
  const int64_t dropped = drop.sum().item<int64_t>();
  if (dropped == 0) return 0;
  const at::Tensor slots = slot_index(t, t.capacity);
  const at::Tensor keep = slots.lt(t.sizes.unsqueeze(1)).logical_and(drop.logical_not());
  const at::Tensor remap =
      at::where(keep, keep.to(at::kLong).cumsum(1) - 1, at::full({}, int64_t{-1}, slots.options()));
  compact(t, keep, remap);
  return dropped;
}

at::Tensor oldest_beyond_budget(const EntryTable& t, int64_t budget) {
  const at::Tensor slots = slot_index(t, t.capacity);
  const at::Tensor excess = (t.sizes - budget).clamp_min(0).unsqueeze(1);
  const at::Tensor candidate =
      slots.lt(t.sizes.unsqueeze(1)).logical_and(t.sink.narrow(1, 0, t.capacity).logical_not());
  return candidate.logical_and(candidate.to(at::kLong).cumsum(1).le(excess));
}

int64_t merge_closest_beyond_budget(EntryTable& t, int64_t budget) {
  const int64_t cap = t.capacity;
  const int64_t d = t.head_dim;
  const at::Tensor excess = (t.sizes - budget).clamp_min(0);
  if (excess.max().item<int64_t>() == 0) return 0;
  const at::Tensor slots = slot_index(t, cap);
  const at::Tensor valid = slots.lt(t.sizes.unsqueeze(1));
  // Edge j joins slots j and j + 1; both must be non-sink entries (sink entries come first).
  at::Tensor keys = t.keys.narrow(1, 0, cap).narrow(2, 0, d).to(at::kFloat);
  keys = keys / keys.norm(2, {-1}, true).clamp_min(1e-12);
  const at::Tensor similarity = (keys.narrow(1, 0, cap - 1) * keys.narrow(1, 1, cap - 1)).sum(-1);
  const at::Tensor eligible =
      valid.narrow(1, 1, cap - 1).logical_and(t.sink.narrow(1, 0, cap - 1).logical_not());
  const at::Tensor score =
      similarity.masked_fill(eligible.logical_not(), -std::numeric_limits<float>::infinity());
  const at::Tensor order = std::get<1>(score.sort(1, /*descending=*/true));
  const at::Tensor rank = at::empty_like(order).scatter_(
      1, order, at::arange(cap - 1, order.options()).unsqueeze(0).expand_as(order));
  const at::Tensor selected = eligible.logical_and(rank.lt(excess.unsqueeze(1)));  // [R, cap-1]
  const at::Tensor no = at::zeros({selected.size(0), 1}, selected.options());
  const at::Tensor joins_previous = at::cat({no, selected}, 1);  // slot j+1 joins j's run
  const at::Tensor ends_run = at::cat({selected, no}, 1).logical_not().logical_and(valid);
  const at::Tensor run = joins_previous.logical_not().to(at::kLong).cumsum(1) - 1;
  const at::Tensor goal = at::where(valid, run, at::full({}, cap, run.options()));
  const at::Tensor counts = t.counts.narrow(1, 0, cap);
  const at::Tensor run_counts = at::zeros_like(t.counts).scatter_add_(1, goal, counts);
  const at::Tensor weighted =
      t.values.narrow(1, 0, cap).narrow(2, 0, d).to(at::kFloat) * counts.unsqueeze(-1);
  const at::Tensor run_sums = at::zeros({weighted.size(0), cap + 1, d}, weighted.options())
                                  .scatter_add_(1, expand_last(goal, d), weighted);
  const at::Tensor run_means = run_sums / run_counts.clamp_min(1.0f).unsqueeze(-1);
  const int64_t removed = selected.sum().item<int64_t>();
  compact(t, ends_run, at::where(valid, run, at::full({}, int64_t{-1}, run.options())));
  t.counts.narrow(1, 0, cap).copy_(run_counts.narrow(1, 0, cap));
  t.values.narrow(1, 0, cap).narrow(2, 0, d).copy_(run_means.narrow(1, 0, cap));
  return removed;
}

}  // namespace wc::attention
