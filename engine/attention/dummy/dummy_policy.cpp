// See dummy_policy.h: the Dummy Forcing baseline (warm-up, online classification, packed paths).
#include "engine/attention/dummy/dummy_policy.h"

#include <algorithm>
#include <string>

#include "engine/attention/dummy/dummy_head_programming.h"
#include "engine/attention/headcast/head_groups.h"
#include "engine/attention/path_timer.h"
#include "engine/attention/sdpa.h"
#include "engine/core/error.h"

namespace wc::attention {
namespace {

constexpr const char* kWhere = "policy dummy";

at::Tensor index_tensor(const std::vector<int64_t>& indices, const at::Device& device) {
  return at::tensor(indices, at::TensorOptions().dtype(at::kLong)).to(device);
}

std::string shape_string(const at::Tensor& t) {
  std::string out = "[";
  for (int64_t i = 0; i < t.dim(); ++i) out += (i ? ", " : "") + std::to_string(t.size(i));
  return out + "]";
}

}  // namespace

DummyPolicy::DummyPolicy(const ModelShape& shape, const nlohmann::json& settings) : shape_(shape) {
  const auto& g = shape.geometry;
  if (shape.num_layers < 1 || shape.num_heads < 1 || shape.head_dim < 1 || shape.batch < 1 ||
      g.frames < 1 || g.grid_h < 1 || g.grid_w < 1) {
    throw Error(kWhere,
                "model shape must have positive layers, heads, head_dim, batch and "
                "block geometry");
  }
  settings_ = parse_dummy_settings(settings, default_dummy_settings(shape), shape);
  reset();
}

void DummyPolicy::reset() {
  const int64_t b = shape_.batch;
  const int64_t h = shape_.num_heads;
  const int64_t d = shape_.head_dim;
  const int64_t nf = shape_.geometry.tokens_per_frame();
  const int64_t t = shape_.geometry.tokens_per_block();
  const auto options = at::TensorOptions().dtype(shape_.dtype).device(shape_.device);
  layers_.assign(static_cast<size_t>(shape_.num_layers), Layer{});
  p0_.assign(static_cast<size_t>(shape_.num_layers * shape_.num_heads), HeadScores::kUnset);
  p1_ = p0_;
  for (size_t l = 0; l < layers_.size(); ++l) {
    Layer& state = layers_[l];
    if (settings_.forced) {
      cast_layer(state, (*settings_.forced)[l]);
      continue;
    }
    state.sink_k = at::empty({b, h, nf, d}, options);
    state.sink_v = at::empty({b, h, nf, d}, options);
    state.local_k = at::empty({b, h, settings_.context_blocks * t, d}, options);
    state.local_v = at::empty({b, h, settings_.context_blocks * t, d}, options);
  }
}

void DummyPolicy::reclassify() {
  if (!settings_.forced) reset();
}

void DummyPolicy::configure(const nlohmann::json& settings) {
  DummySettings next = parse_dummy_settings(settings, settings_, shape_);
  const bool structural =
      next.num_dummy != settings_.num_dummy || next.classify_block != settings_.classify_block ||
      next.context_blocks != settings_.context_blocks || next.cast != settings_.cast;
  settings_ = std::move(next);
  if (structural) reset();
}

nlohmann::json DummyPolicy::settings() const {
  return dummy_settings_json(settings_);
}

void DummyPolicy::check_inputs(int layer, const at::Tensor& q, const at::Tensor& k,
                               const at::Tensor& v) const {
  if (layer < 0 || layer >= shape_.num_layers) {
    throw Error(kWhere, "layer " + std::to_string(layer) + " out of range [0, " +
                            std::to_string(shape_.num_layers) + ")");
  }
  const std::vector<int64_t> expected = {shape_.batch, shape_.num_heads,
                                         shape_.geometry.tokens_per_block(), shape_.head_dim};
  for (const at::Tensor* t : {&q, &k, &v}) {
    if (!t->defined() || t->sizes() != at::IntArrayRef(expected)) {
      throw Error(kWhere, "q/k/v must be [B, H, T, D] = [" + std::to_string(expected[0]) + ", " +
                              std::to_string(expected[1]) + ", " + std::to_string(expected[2]) +
                              ", " + std::to_string(expected[3]) + "], got " +
                              (t->defined() ? shape_string(*t) : std::string("undefined")));
    }
    if (t->scalar_type() != shape_.dtype || !on_device(*t, shape_.device)) {
      throw Error(kWhere, "q/k/v dtype or device differs from the model shape's");
    }
  }
}

at::Tensor DummyPolicy::attend(int layer, const at::Tensor& q, const at::Tensor& k,
                               const at::Tensor& v, const StepInfo& step) {
  check_inputs(layer, q, k, v);
  Layer& state = layers_[static_cast<size_t>(layer)];
  if (state.cast) return attend_cast(state, q, k, v);
  return attend_warmup(layer, q, k, v, step);
}

at::Tensor DummyPolicy::attend_warmup(int layer, const at::Tensor& q, const at::Tensor& k,
                                      const at::Tensor& v, const StepInfo& step) {
  Layer& state = layers_[static_cast<size_t>(layer)];
  const int64_t nf = shape_.geometry.tokens_per_frame();
  const int64_t t = shape_.geometry.tokens_per_block();
  const int64_t ctx = settings_.context_blocks;
  std::vector<at::Tensor> keys, values;
  if (state.committed > 0) {
    keys.push_back(state.sink_k);
    values.push_back(state.sink_v);
  }
  const int64_t slots = std::min(state.committed, ctx);
  for (int64_t slot = 0; slot < slots; ++slot) {
    // Block 0 still in slot 0: its frame 0 is the sink, so only frames 1..F-1 count as local.
    const int64_t skip = (slot == 0 && state.committed <= ctx) ? nf : 0;
    if (t - skip == 0) continue;
    keys.push_back(state.local_k.narrow(2, slot * t + skip, t - skip));
    values.push_back(state.local_v.narrow(2, slot * t + skip, t - skip));
  }
  keys.push_back(k);
  values.push_back(v);
  const at::Tensor all_k = keys.size() == 1 ? k : at::cat(keys, 2);
  const at::Tensor all_v = values.size() == 1 ? v : at::cat(values, 2);

  if (step.clean_pass && !state.has_masses && state.committed >= settings_.classify_block) {
    PathScope scope(timer_, "classify");
    const int64_t rows =
        settings_.query_sample > 0 ? settings_.query_sample : std::max<int64_t>(1, nf / 3);
    const auto sample = sample_query_rows(t, rows, settings_.seed, layer);
    const int64_t first_end = state.committed > 0 ? nf : 0;
    const SegmentMasses masses =
        attention_segment_masses(q, all_k, sample, first_end, all_k.size(2) - t);
    state.p_first = masses.first;
    state.p_mid = masses.mid;
    state.has_masses = true;
  }
  PathScope scope(timer_, "dense");
  return attention(q, all_k, all_v);
}

at::Tensor DummyPolicy::attend_cast(Layer& state, const at::Tensor& q, const at::Tensor& k,
                                    const at::Tensor& v) {
  const int64_t nf = shape_.geometry.tokens_per_frame();
  const int64_t t = shape_.geometry.tokens_per_block();
  const bool packed = state.num_sink + state.num_dummy > 0;
  const bool neighbour = state.num_neighbour > 0;
  at::Tensor q_packed, k_packed, v_packed, q_neighbour, k_neighbour, v_neighbour;
  {
    PathScope scope(timer_, "gather");
    if (packed) {
      q_packed = q.index_select(1, state.packed_heads);
      k_packed = k.index_select(1, state.packed_heads);
      v_packed = v.index_select(1, state.packed_heads);
    }
    if (neighbour) {
      q_neighbour = q.index_select(1, state.neighbour_heads);
      k_neighbour = k.index_select(1, state.neighbour_heads);
      v_neighbour = v.index_select(1, state.neighbour_heads);
    }
  }
  at::Tensor out_packed, out_neighbour;
  if (packed) {
    PathScope scope(timer_, "sink_dummy");
    const int64_t stored = state.committed > 0 ? nf : 0;
    state.packed_k.narrow(2, stored, t).copy_(k_packed);
    state.packed_v.narrow(2, stored, t).copy_(v_packed);
    out_packed = attention(q_packed, state.packed_k.narrow(2, 0, stored + t),
                           state.packed_v.narrow(2, 0, stored + t));
  }
  if (neighbour) {
    PathScope scope(timer_, "neighbour");
    const int64_t stored = std::min<int64_t>(state.committed, settings_.context_blocks) * t;
    state.neighbour_k.narrow(2, stored, t).copy_(k_neighbour);
    state.neighbour_v.narrow(2, stored, t).copy_(v_neighbour);
    out_neighbour = attention(q_neighbour, state.neighbour_k.narrow(2, 0, stored + t),
                              state.neighbour_v.narrow(2, 0, stored + t));
  }
  PathScope scope(timer_, "scatter");
  at::Tensor out = empty_layer_output(q, q.size(1));
  if (packed) out.index_copy_(1, state.packed_heads, out_packed);
  if (neighbour) out.index_copy_(1, state.neighbour_heads, out_neighbour);
  return out;
}

void DummyPolicy::commit(int layer, const at::Tensor& k, const at::Tensor& v,
                         const StepInfo& step) {
  check_inputs(layer, k, k, v);
  Layer& state = layers_[static_cast<size_t>(layer)];
  if (state.cast) {
    commit_cast(state, k, v);
  } else {
    commit_warmup(state, k, v);
    maybe_program_heads();
  }
}

void DummyPolicy::commit_warmup(Layer& state, const at::Tensor& k, const at::Tensor& v) {
  const int64_t nf = shape_.geometry.tokens_per_frame();
  const int64_t t = shape_.geometry.tokens_per_block();
  if (state.committed == 0) {
    state.sink_k.copy_(k.narrow(2, 0, nf));
    state.sink_v.copy_(v.narrow(2, 0, nf));
  }
  const int64_t slot = state.committed % settings_.context_blocks;
  state.local_k.narrow(2, slot * t, t).copy_(k);
  state.local_v.narrow(2, slot * t, t).copy_(v);
  ++state.committed;
}

void DummyPolicy::commit_cast(Layer& state, const at::Tensor& k, const at::Tensor& v) {
  const int64_t nf = shape_.geometry.tokens_per_frame();
  const int64_t t = shape_.geometry.tokens_per_block();
  if (state.committed == 0 && state.num_sink > 0) {
    // Only a forced cast starts without frame 0; Sink heads take it from the first block.
    state.packed_k.narrow(2, 0, nf)
        .narrow(1, 0, state.num_sink)
        .copy_(k.narrow(2, 0, nf).index_select(1, state.sink_heads));
    state.packed_v.narrow(2, 0, nf)
        .narrow(1, 0, state.num_sink)
        .copy_(v.narrow(2, 0, nf).index_select(1, state.sink_heads));
  }
  if (state.num_dummy > 0) {
    state.packed_k.narrow(2, 0, nf)
        .narrow(1, state.num_sink, state.num_dummy)
        .copy_(k.narrow(2, t - nf, nf).index_select(1, state.dummy_heads));
    state.packed_v.narrow(2, 0, nf)
        .narrow(1, state.num_sink, state.num_dummy)
        .copy_(v.narrow(2, t - nf, nf).index_select(1, state.dummy_heads));
  }
  if (state.num_neighbour > 0) {
    const int64_t slot = state.committed % settings_.context_blocks;
    state.neighbour_k.narrow(2, slot * t, t).copy_(k.index_select(1, state.neighbour_heads));
    state.neighbour_v.narrow(2, slot * t, t).copy_(v.index_select(1, state.neighbour_heads));
  }
  ++state.committed;
}

void DummyPolicy::maybe_program_heads() {
  for (const Layer& state : layers_) {
    if (state.cast || !state.has_masses || state.committed != layers_.front().committed) return;
  }
  std::vector<double> p_first, p_mid;
  for (const Layer& state : layers_) {
    p_first.insert(p_first.end(), state.p_first.begin(), state.p_first.end());
    p_mid.insert(p_mid.end(), state.p_mid.begin(), state.p_mid.end());
  }
  const DummyCast cast = program_dummy_heads(p_first, p_mid, settings_.num_dummy);
  p0_ = cast.p_first;
  p1_ = cast.p_mid;
  const auto heads = static_cast<size_t>(shape_.num_heads);
  for (size_t l = 0; l < layers_.size(); ++l) {
    cast_layer(layers_[l], std::vector<HeadType>(cast.types.begin() + l * heads,
                                                 cast.types.begin() + (l + 1) * heads));
  }
}

void DummyPolicy::cast_layer(Layer& state, const std::vector<HeadType>& types) {
  const int64_t b = shape_.batch;
  const int64_t d = shape_.head_dim;
  const int64_t nf = shape_.geometry.tokens_per_frame();
  const int64_t t = shape_.geometry.tokens_per_block();
  const int64_t ctx = settings_.context_blocks;
  const auto options = at::TensorOptions().dtype(shape_.dtype).device(shape_.device);
  std::vector<int64_t> sink, dummy, neighbour;
  for (size_t h = 0; h < types.size(); ++h) {
    const auto index = static_cast<int64_t>(h);
    if (types[h] == HeadType::kSink) sink.push_back(index);
    if (types[h] == HeadType::kDummy) dummy.push_back(index);
    if (types[h] == HeadType::kNeighbour) neighbour.push_back(index);
  }
  std::vector<int64_t> packed = sink;
  packed.insert(packed.end(), dummy.begin(), dummy.end());
  state.types = types;
  state.num_sink = static_cast<int64_t>(sink.size());
  state.num_dummy = static_cast<int64_t>(dummy.size());
  state.num_neighbour = static_cast<int64_t>(neighbour.size());
  state.sink_heads = index_tensor(sink, shape_.device);
  state.dummy_heads = index_tensor(dummy, shape_.device);
  state.neighbour_heads = index_tensor(neighbour, shape_.device);
  state.packed_heads = index_tensor(packed, shape_.device);
  state.packed_k = at::empty({b, state.num_sink + state.num_dummy, nf + t, d}, options);
  state.packed_v = at::empty_like(state.packed_k);
  state.neighbour_k = at::empty({b, state.num_neighbour, (ctx + 1) * t, d}, options);
  state.neighbour_v = at::empty_like(state.neighbour_k);
  if (state.committed > 0) {
    // From the warm-up stores: Sink heads keep frame 0, Dummy heads the last frame of the block
    // just committed, Neighbour heads the ring as it is (same slot numbering).
    if (state.num_sink > 0) {
      state.packed_k.narrow(2, 0, nf)
          .narrow(1, 0, state.num_sink)
          .copy_(state.sink_k.index_select(1, state.sink_heads));
      state.packed_v.narrow(2, 0, nf)
          .narrow(1, 0, state.num_sink)
          .copy_(state.sink_v.index_select(1, state.sink_heads));
    }
    if (state.num_dummy > 0) {
      const int64_t last = ((state.committed - 1) % ctx) * t + t - nf;
      state.packed_k.narrow(2, 0, nf)
          .narrow(1, state.num_sink, state.num_dummy)
          .copy_(state.local_k.narrow(2, last, nf).index_select(1, state.dummy_heads));
      state.packed_v.narrow(2, 0, nf)
          .narrow(1, state.num_sink, state.num_dummy)
          .copy_(state.local_v.narrow(2, last, nf).index_select(1, state.dummy_heads));
    }
    if (state.num_neighbour > 0) {
      state.neighbour_k.narrow(2, 0, ctx * t)
          .copy_(state.local_k.index_select(1, state.neighbour_heads));
      state.neighbour_v.narrow(2, 0, ctx * t)
          .copy_(state.local_v.index_select(1, state.neighbour_heads));
    }
  }
  state.sink_k = state.sink_v = state.local_k = state.local_v = at::Tensor();
  state.cast = true;
}

PolicyStats DummyPolicy::stats() const {
  const int64_t nf = shape_.geometry.tokens_per_frame();
  const int64_t t = shape_.geometry.tokens_per_block();
  const int64_t bytes_per_token =
      2 * shape_.batch * shape_.head_dim * static_cast<int64_t>(at::elementSize(shape_.dtype));
  PolicyStats out;
  out.policy = name();
  out.classified = true;
  out.blocks_committed = layers_.front().committed;
  auto add = [&](HeadType type, int64_t heads, int64_t tokens_per_head) {
    auto& slot = out.per_type[static_cast<size_t>(type)];
    slot.heads += static_cast<int>(heads);
    slot.cached_tokens += heads * tokens_per_head;
    slot.cached_bytes += heads * tokens_per_head * bytes_per_token;
  };
  for (size_t l = 0; l < layers_.size(); ++l) {
    const Layer& state = layers_[l];
    out.classified = out.classified && state.cast;
    out.blocks_committed = std::min(out.blocks_committed, state.committed);
    const int64_t ring = std::min<int64_t>(state.committed, settings_.context_blocks) * t;
    const int64_t frame = state.committed > 0 ? nf : 0;
    std::vector<HeadStats> heads(static_cast<size_t>(shape_.num_heads));
    for (size_t h = 0; h < heads.size(); ++h) {
      const size_t flat = l * heads.size() + h;
      heads[h].type = state.cast ? state.types[h] : HeadType::kDense;
      heads[h].scores.sink = p0_[flat];
      heads[h].scores.dummy = p1_[flat];
    }
    out.heads.push_back(std::move(heads));
    if (state.cast) {
      add(HeadType::kSink, state.num_sink, frame);
      add(HeadType::kDummy, state.num_dummy, frame);
      add(HeadType::kNeighbour, state.num_neighbour, ring);
    } else {
      add(HeadType::kDense, shape_.num_heads, frame + ring);
    }
  }
  return out;
}

std::unique_ptr<AttentionPolicy> make_dummy_policy(const ModelShape& shape,
                                                   const nlohmann::json& settings) {
  return std::make_unique<DummyPolicy>(shape, settings);
}

}  // namespace wc::attention
