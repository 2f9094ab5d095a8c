// See classify_heads.h. Runs once per rollout (and per re-classify), so it favours clarity and
// float32 accuracy over speed: the reference attention, one head at a time to bound memory.
#include "engine/attention/headcast/classify_heads.h"

#include <algorithm>
#include <cmath>
#include <functional>
#include <numeric>
#include <random>

#include "engine/attention/sdpa.h"

namespace wc::attention {
namespace {

at::Tensor long_tensor(const std::vector<int64_t>& values, const at::Device& device) {
  return at::tensor(values, at::TensorOptions().dtype(at::kLong)).to(device);
}

// Key token indices of the slots whose frames satisfy `wanted`.
at::Tensor slot_tokens(const std::vector<int64_t>& slot_frames, int64_t frame_tokens,
                       const at::Device& device, const std::function<bool(int64_t)>& wanted) {
  std::vector<int64_t> tokens;
  for (size_t s = 0; s < slot_frames.size(); ++s) {
    if (!wanted(slot_frames[s])) continue;
    for (int64_t t = 0; t < frame_tokens; ++t)
      tokens.push_back(static_cast<int64_t>(s) * frame_tokens + t);
  }
  return long_tensor(tokens, device);
}

struct Agreement {
  double mean_cos = 0;
  double p5_cos = 0;
  double worst_cos = 0;
  double error = 0;
};

Agreement agreement(const at::Tensor& full, const at::Tensor& restricted) {
  const at::Tensor cos =
      at::cosine_similarity(full, restricted, -1).flatten().to(at::kDouble).cpu();
  std::vector<double> values(cos.data_ptr<double>(), cos.data_ptr<double>() + cos.numel());
  Agreement a;
  a.mean_cos =
      std::accumulate(values.begin(), values.end(), 0.0) / static_cast<double>(values.size());
  a.worst_cos = *std::min_element(values.begin(), values.end());
  a.p5_cos = percentile(std::move(values), 0.05);
  const double num = (full - restricted).pow(2).sum().item<double>();
  const double den = full.pow(2).sum().item<double>();
  a.error = den > 0 ? num / den : 0.0;
  return a;
}

}  // namespace

double percentile(std::vector<double> values, double p) {
  if (values.empty()) return std::nan("");
  std::sort(values.begin(), values.end());
  const double position = p * static_cast<double>(values.size() - 1);
  const size_t lower = static_cast<size_t>(std::floor(position));
  const size_t upper = std::min(lower + 1, values.size() - 1);
  const double fraction = position - static_cast<double>(lower);
  return values[lower] + fraction * (values[upper] - values[lower]);
}

std::vector<int64_t> sample_query_rows(int64_t tokens, int64_t sample, uint64_t seed) {
  std::vector<int64_t> rows(static_cast<size_t>(tokens));
  std::iota(rows.begin(), rows.end(), 0);
  if (sample == 0 || sample >= tokens) return rows;
  std::mt19937_64 rng(seed);
  // Partial Fisher-Yates with our own draws (portable across standard libraries).
  for (int64_t i = 0; i < sample; ++i) {
    const int64_t j = i + static_cast<int64_t>(rng() % static_cast<uint64_t>(tokens - i));
    std::swap(rows[i], rows[j]);
  }
  rows.resize(static_cast<size_t>(sample));
  std::sort(rows.begin(), rows.end());
  return rows;
}

std::vector<HeadEvidence> classify_heads(const ClassifyInputs& in, const std::vector<int64_t>& rows,
                                         const SpatialProxy& proxy) {
  const auto device = in.q.device();
  const BlockGeometry& g = in.geometry;
  const int64_t frame_tokens = g.tokens_per_frame();
  const at::Tensor row_index = long_tensor(rows, device);
  const at::Tensor q_rows = in.q.index_select(2, row_index).to(at::kFloat);

  const int64_t block_frames = g.frames;
  const int64_t current = in.block;
  const at::Tensor sink_keys = slot_tokens(in.slot_frames, frame_tokens, device, [&](int64_t f) {
    return f / block_frames == 0 || f / block_frames == current;
  });
  const at::Tensor dummy_keys = slot_tokens(in.slot_frames, frame_tokens, device, [&](int64_t f) {
    return f / block_frames == current - 1 || f / block_frames == current;
  });

  // Spatial mask [rows, keys]: the same region in every slot, built for one frame and repeated
  // (a [rows, keys] index grid would cost gigabytes at 1080P).
  const at::Tensor key_pos =
      at::arange(frame_tokens, at::TensorOptions().dtype(at::kLong).device(device));
  const at::Tensor query_pos = row_index.remainder(frame_tokens);
  at::Tensor frame_mask;
  if (proxy.cells) {
    std::vector<int64_t> cell_ids;
    cell_ids.reserve(static_cast<size_t>(frame_tokens));
    for (int y = 0; y < g.grid_h; ++y) {
      for (int x = 0; x < g.grid_w; ++x) cell_ids.push_back(proxy.cells->cell_of(y, x));
    }
    const at::Tensor cell = long_tensor(cell_ids, device);
    frame_mask = cell.index_select(0, query_pos).unsqueeze(1).eq(cell.unsqueeze(0));
  } else {
    const at::Tensor dy = (query_pos.div(g.grid_w, "floor").unsqueeze(1) -
                           key_pos.div(g.grid_w, "floor").unsqueeze(0))
                              .abs();
    const at::Tensor dx =
        (query_pos.remainder(g.grid_w).unsqueeze(1) - key_pos.remainder(g.grid_w).unsqueeze(0))
            .abs();
    frame_mask = dy.le(proxy.radius).logical_and(dx.le(proxy.radius));
  }
  const at::Tensor spatial_mask = frame_mask.repeat({1, in.k.size(2) / frame_tokens});

  std::vector<HeadEvidence> evidence;
  for (int64_t h = 0; h < in.q.size(1); ++h) {
    const at::Tensor q = q_rows.narrow(1, h, 1);
    const at::Tensor k = in.k.narrow(1, h, 1).to(at::kFloat);
    const at::Tensor v = in.v.narrow(1, h, 1).to(at::kFloat);
    const at::Tensor full = reference_attention(q, k, v);
    const at::Tensor sink =
        reference_attention(q, k.index_select(2, sink_keys), v.index_select(2, sink_keys));
    const at::Tensor dummy =
        reference_attention(q, k.index_select(2, dummy_keys), v.index_select(2, dummy_keys));
    const at::Tensor spatial = reference_attention(q, k, v, spatial_mask);
    HeadEvidence e;
    const Agreement si = agreement(full, sink), du = agreement(full, dummy);
    e.sink = si.mean_cos;
    e.sink_worst = si.worst_cos;
    e.dummy = du.mean_cos;
    e.dummy_worst = du.worst_cos;
    const Agreement sp = agreement(full, spatial);
    e.spatial_mean = sp.mean_cos;
    e.spatial_p5 = sp.p5_cos;
    e.spatial_worst = sp.worst_cos;
    e.spatial_error = sp.error;
    evidence.push_back(e);
  }
  return evidence;
}

}  // namespace wc::attention
