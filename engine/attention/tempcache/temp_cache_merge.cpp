// See temp_cache_merge.h and Note [TempCache slots]. Nothing here reads a device value on the
// host (no .item(), nonzero, masked_select or boolean indexing): tempcache_sync_free_grep checks.
#include "engine/attention/tempcache/temp_cache_merge.h"

#include <limits>
#include <vector>

namespace wc::attention {
namespace {

constexpr int64_t kLast = std::numeric_limits<int64_t>::max();

at::Tensor expand_last(const at::Tensor& index, int64_t dims) {
  std::vector<int64_t> sizes = index.sizes().vec();
  sizes.push_back(dims);
  return index.unsqueeze(-1).expand(sizes);
}

at::Tensor slot_range(const EntryTable& t, int64_t begin, int64_t count) {
  return at::arange(begin, begin + count, t.seq.options()).unsqueeze(0);
}

// The `n` lowest free slots of each row among slots [0, count), ascending ([R, n]); `fill` where
// a row has fewer.
at::Tensor lowest_free_slots(const EntryTable& t, int64_t count, int64_t n, int64_t fill) {
  const int64_t rows = t.valid.size(0);
  const at::Tensor free = t.valid.narrow(1, 0, count).logical_not();
  const at::Tensor rank = free.to(at::kLong).cumsum(1) - 1;
  const at::Tensor column = rank.masked_fill(free.logical_and(rank.lt(n)).logical_not(), n);
  at::Tensor slots = at::full({rows, n + 1}, fill, t.seq.options());
  // Column n collects the slots that are not wanted (any of them may land there).
  slots.scatter_(1, column, slot_range(t, 0, count).expand({rows, count}));
  return slots.narrow(1, 0, n);
}

// Points `colocated` entries whose slot is in `gone` ([R, capacity]) at nothing.
void forget_colocated(EntryTable& t, const at::Tensor& gone) {
  const at::Tensor slot = t.colocated.clamp_min(0);
  t.colocated.masked_fill_(gone.gather(1, slot), -1);
}

// Points each `colocated` entry at remap[slot] (remap: [R, capacity + 1]); -1 stays -1.
void remap_colocated(EntryTable& t, const at::Tensor& remap) {
  const at::Tensor seen = t.colocated.ge(0);
  t.colocated.copy_(at::where(seen, remap.gather(1, t.colocated.clamp_min(0)),
                              at::full({}, int64_t{-1}, t.seq.options())));
}

}  // namespace

at::Tensor inverse_norm(const at::Tensor& x) {
  return x.to(at::kFloat).norm(2, {-1}).clamp_min(1e-12).reciprocal();
}

void apply_frame(EntryTable& t, const at::Tensor& k, const at::Tensor& v, const at::Tensor& codes,
                 const at::Tensor& target, const at::Tensor& frame, bool sink) {
  const int64_t rows = k.size(0);
  const int64_t n = k.size(1);
  const int64_t d = t.head_dim;
  const int64_t trash = t.capacity;
  const auto long_options = t.seq.options();
  const at::Tensor token = at::arange(n, long_options).unsqueeze(0).expand({rows, n});
  const at::Tensor merged = target.ge(0);
  const at::Tensor goal = target.masked_fill(merged.logical_not(), trash);
  // One key per entry and frame: the newest (largest token index) wins.
  const at::Tensor newest =
      at::full({rows, trash + 1}, int64_t{-1}, long_options).scatter_reduce(1, goal, token, "amax");
  const at::Tensor winner = merged.logical_and(newest.gather(1, goal).eq(token));
  const at::Tensor append = winner.logical_not();
  const at::Tensor append_rank = (append.to(at::kLong).cumsum(1) - 1).clamp_min(0);
  const at::Tensor appended = lowest_free_slots(t, t.capacity, n, trash).gather(1, append_rank);
  const at::Tensor dest = at::where(winner, goal, appended);  // unique per row

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
  t.last_frame.scatter_(1, dest, frame.expand({rows, n}));
  t.seq.scatter_(1, dest, at::where(winner, t.seq.gather(1, goal), token + frame * n));
  t.sink.scatter_(1, dest,
                  t.sink.gather(1, goal).logical_and(winner).logical_or(
                      append.logical_and(at::full({}, sink, t.sink.options()))));
  t.valid.scatter_(1, dest, true);
  t.codes.scatter_(1, dest, codes);
  t.inv_norm.scatter_(1, dest, inverse_norm(k));
  t.colocated.copy_(dest);
  t.merges.add_(winner.sum());
}

void drop_entries(EntryTable& t, const at::Tensor& drop) {
  t.valid.narrow(1, 0, t.capacity).logical_and_(drop.logical_not());
  t.counts.narrow(1, 0, t.capacity).masked_fill_(drop, 0.0f);
  forget_colocated(t, drop);
  t.evictions.add_(drop.sum());
}

at::Tensor older_than(const EntryTable& t, const at::Tensor& oldest_frame) {
  const int64_t cap = t.capacity;
  return t.valid.narrow(1, 0, cap)
      .logical_and(t.sink.narrow(1, 0, cap).logical_not())
      .logical_and(t.last_frame.narrow(1, 0, cap).lt(oldest_frame));
}

at::Tensor oldest_beyond_budget(const EntryTable& t, int64_t budget) {
  const int64_t cap = t.capacity;
  const at::Tensor valid = t.valid.narrow(1, 0, cap);
  const at::Tensor eligible = valid.logical_and(t.sink.narrow(1, 0, cap).logical_not());
  const at::Tensor excess = (valid.sum(1) - budget).clamp_min(0).unsqueeze(1);
  const at::Tensor order_key = t.seq.narrow(1, 0, cap).masked_fill(eligible.logical_not(), kLast);
  const at::Tensor sorted = std::get<0>(order_key.sort(1));
  // The excess-th oldest eligible seq per row; rows without excess drop nothing.
  const at::Tensor threshold = sorted.gather(1, (excess - 1).clamp_min(0));
  return eligible.logical_and(order_key.le(threshold)).logical_and(excess.gt(0));
}

void merge_closest_beyond_budget(EntryTable& t, int64_t budget) {
  const int64_t cap = t.capacity;
  const int64_t d = t.head_dim;
  const int64_t rows = t.valid.size(0);
  const auto long_options = t.seq.options();
  const at::Tensor valid = t.valid.narrow(1, 0, cap);
  const at::Tensor eligible = valid.logical_and(t.sink.narrow(1, 0, cap).logical_not());
  const at::Tensor excess = (valid.sum(1) - budget).clamp_min(0).unsqueeze(1);
  // Positions: eligible entries in insertion order first, then the rest.
  const at::Tensor order =
      std::get<1>(t.seq.narrow(1, 0, cap).masked_fill(eligible.logical_not(), kLast).sort(1));
  const at::Tensor in_order = eligible.gather(1, order);
  const at::Tensor unit =
      t.keys.narrow(1, 0, cap).narrow(2, 0, d).gather(1, expand_last(order, d)).to(at::kFloat) *
      t.inv_norm.gather(1, order).unsqueeze(-1);
  // Edge p joins positions p and p + 1.
  const at::Tensor similarity = (unit.narrow(1, 0, cap - 1) * unit.narrow(1, 1, cap - 1)).sum(-1);
  const at::Tensor edge_ok = in_order.narrow(1, 1, cap - 1);
  const at::Tensor score =
      similarity.masked_fill(edge_ok.logical_not(), -std::numeric_limits<float>::infinity());
  const at::Tensor by_score = std::get<1>(score.sort(1, /*descending=*/true));
  const at::Tensor rank = at::empty_like(by_score).scatter_(
      1, by_score, at::arange(cap - 1, long_options).unsqueeze(0).expand_as(by_score));
  const at::Tensor selected = edge_ok.logical_and(rank.lt(excess));
  const at::Tensor no = at::zeros({rows, 1}, selected.options());
  const at::Tensor joins_previous = at::cat({no, selected}, 1);  // [R, cap]
  const at::Tensor run = joins_previous.logical_not().to(at::kLong).cumsum(1) - 1;
  const at::Tensor position = at::arange(cap, long_options).unsqueeze(0).expand({rows, cap});
  const at::Tensor run_last =
      at::full({rows, cap}, int64_t{0}, long_options).scatter_reduce(1, run, position, "amax");
  // Slot space: each slot's survivor (the newest member of its run; itself if alone).
  const at::Tensor survivor_of_position = order.gather(1, run_last.gather(1, run));
  at::Tensor survivor = at::arange(cap + 1, long_options).unsqueeze(0).repeat({rows, 1});
  survivor.scatter_(1, order, survivor_of_position);
  const at::Tensor members = survivor.narrow(1, 0, cap);
  const at::Tensor counts = t.counts.narrow(1, 0, cap);
  const at::Tensor run_counts = at::zeros_like(t.counts).scatter_add(1, members, counts);
  const at::Tensor values = t.values.narrow(1, 0, cap).narrow(2, 0, d);
  const at::Tensor run_sums =
      at::zeros({rows, cap + 1, d}, counts.options())
          .scatter_add(1, expand_last(members, d), values.to(at::kFloat) * counts.unsqueeze(-1));
  const at::Tensor grown = run_counts.narrow(1, 0, cap).ne(counts).logical_and(valid);
  const at::Tensor removed = members.ne(position).logical_and(valid);
  const at::Tensor means =
      run_sums.narrow(1, 0, cap) / run_counts.narrow(1, 0, cap).clamp_min(1.0f).unsqueeze(-1);
  at::Tensor values_out = values;
  values_out.copy_(at::where(grown.logical_and(removed.logical_not()).unsqueeze(-1),
                             means.to(values.scalar_type()), values));
  t.counts.narrow(1, 0, cap).copy_(run_counts.narrow(1, 0, cap));
  t.valid.narrow(1, 0, cap).logical_and_(removed.logical_not());
  remap_colocated(t, survivor);
  t.merges.add_(removed.sum());
}

void move_tail_entries(EntryTable& t, int64_t limit) {
  const int64_t cap = t.capacity;
  const int64_t tail = cap - limit;
  if (tail <= 0) return;
  const int64_t rows = t.valid.size(0);
  const at::Tensor tail_valid = t.valid.narrow(1, limit, tail);
  const at::Tensor holes = lowest_free_slots(t, limit, tail, cap);
  const at::Tensor occupied_rank = (tail_valid.to(at::kLong).cumsum(1) - 1).clamp_min(0);
  // Free tail slots "move" onto themselves, so every destination is distinct.
  const at::Tensor dest = at::where(tail_valid, holes.gather(1, occupied_rank),
                                    slot_range(t, limit, tail).expand({rows, tail}));
  for (at::Tensor* buffer : {&t.keys, &t.values}) {
    const int64_t dp = buffer->size(2);
    buffer->scatter_(1, expand_last(dest, dp), buffer->narrow(1, limit, tail).clone());
  }
  for (at::Tensor* column :
       {&t.counts, &t.last_frame, &t.seq, &t.sink, &t.valid, &t.codes, &t.inv_norm}) {
    column->scatter_(1, dest, column->narrow(1, limit, tail).clone());
  }
  t.valid.narrow(1, limit, tail).fill_(false);
  t.counts.narrow(1, limit, tail).fill_(0.0f);
  at::Tensor remap = at::arange(cap + 1, t.seq.options()).unsqueeze(0).repeat({rows, 1});
  remap.narrow(1, limit, tail).copy_(dest);
  remap_colocated(t, remap);
}

}  // namespace wc::attention
