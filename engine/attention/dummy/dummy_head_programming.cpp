// See dummy_head_programming.h (Dummy Forcing, algorithms.md §2.3).
#include "engine/attention/dummy/dummy_head_programming.h"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <random>

#include "engine/core/error.h"

namespace wc::attention {

std::vector<int64_t> sample_query_rows(int64_t num_queries, int64_t count, uint64_t seed,
                                       int layer) {
  if (num_queries <= 0 || count <= 0) return {};
  std::seed_seq sequence{static_cast<uint32_t>(seed), static_cast<uint32_t>(seed >> 32),
                         static_cast<uint32_t>(layer)};
  std::mt19937_64 generator(sequence);
  std::uniform_int_distribution<int64_t> row(0, num_queries - 1);
  std::vector<int64_t> rows(static_cast<size_t>(count));
  for (auto& r : rows) r = row(generator);
  return rows;
}

SegmentMasses attention_segment_masses(const at::Tensor& q, const at::Tensor& keys,
                                       const std::vector<int64_t>& rows, int64_t first_end,
                                       int64_t mid_end) {
  const int64_t heads = q.size(1);
  const int64_t key_count = keys.size(2);
  if (rows.empty() || first_end < 0 || mid_end < first_end || mid_end > key_count) {
    throw Error("dummy classification", "bad key segments or empty query sample");
  }
  const double scale = 1.0 / std::sqrt(static_cast<double>(q.size(3)));
  const at::Tensor row_index =
      at::tensor(rows, at::TensorOptions().dtype(at::kLong)).to(q.device());
  // One head at a time: the [rows, keys] probability matrix of all heads at once would be
  // gigabytes at 1080p, and this runs once per rollout.
  std::vector<at::Tensor> per_head;
  per_head.reserve(static_cast<size_t>(heads));
  for (int64_t h = 0; h < heads; ++h) {
    const at::Tensor qh = q.select(1, h).index_select(1, row_index).to(at::kFloat);
    const at::Tensor kh = keys.select(1, h).to(at::kFloat);
    const at::Tensor probs = at::softmax(at::matmul(qh, kh.transpose(-2, -1)).mul_(scale), -1);
    const at::Tensor first = probs.narrow(-1, 0, first_end).sum(-1).mean();
    const at::Tensor mid = mid_end > first_end
                               ? probs.narrow(-1, first_end, mid_end - first_end).sum(-1).mean()
                               : at::zeros({}, probs.options());
    per_head.push_back(at::stack({first, mid}));
  }
  const at::Tensor masses = at::stack(per_head).to(at::kCPU, at::kDouble).contiguous();
  const double* data = masses.data_ptr<double>();
  SegmentMasses out;
  for (int64_t h = 0; h < heads; ++h) {
    out.first.push_back(data[2 * h]);
    out.mid.push_back(data[2 * h + 1]);
  }
  return out;
}

DummyCast program_dummy_heads(const std::vector<double>& p_first, const std::vector<double>& p_mid,
                              int num_dummy) {
  const size_t n = p_first.size();
  if (p_mid.size() != n || num_dummy < 0 || static_cast<size_t>(num_dummy) > n) {
    throw Error("dummy classification", "mass vectors disagree or num_dummy out of range");
  }
  const double sum_first = std::accumulate(p_first.begin(), p_first.end(), 0.0);
  const double sum_mid = std::accumulate(p_mid.begin(), p_mid.end(), 0.0);
  DummyCast cast;
  cast.types.resize(n);
  cast.p_first.resize(n);
  cast.p_mid.resize(n);
  std::vector<double> cost(n);
  for (size_t i = 0; i < n; ++i) {
    const double p0 = sum_first > 0.0 ? p_first[i] / sum_first : 0.0;
    const double p1 = sum_mid > 0.0 ? p_mid[i] / sum_mid : 0.0;
    cast.p_first[i] = static_cast<float>(p0);
    cast.p_mid[i] = static_cast<float>(p1);
    cost[i] = std::max(p0, p1);
    cast.types[i] = p0 >= p1 ? HeadType::kSink : HeadType::kNeighbour;
  }
  std::vector<size_t> order(n);
  std::iota(order.begin(), order.end(), size_t{0});
  std::stable_sort(order.begin(), order.end(),
                   [&](size_t a, size_t b) { return cost[a] < cost[b]; });
  for (int i = 0; i < num_dummy; ++i) cast.types[order[static_cast<size_t>(i)]] = HeadType::kDummy;
  return cast;
}

}  // namespace wc::attention
