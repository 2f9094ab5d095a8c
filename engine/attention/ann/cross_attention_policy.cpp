// See cross_attention_policy.h and Note [AnnCA].
#include "engine/attention/ann/cross_attention_policy.h"

#include <torch/version.h>

#include <algorithm>
#include <tuple>

#include "engine/attention/ann/ann_settings.h"
#include "engine/attention/biased_attention.h"
#include "engine/attention/sdpa.h"
#include "engine/attention/tempcache/temp_cache_match.h"
#include "engine/core/error.h"

namespace wc::attention {
namespace {

void check_cross_inputs(const char* policy, const ModelShape& shape, int layer, const at::Tensor& q,
                        const at::Tensor& k, const at::Tensor& v, const StepInfo& step) {
  if (layer < 0 || layer >= shape.num_layers) {
    throw Error(policy, "layer " + std::to_string(layer) + " out of range [0, " +
                            std::to_string(shape.num_layers) + ")");
  }
  const int64_t tokens = step.geometry.tokens_per_block();
  if (q.dim() != 4 || k.dim() != 4 || v.dim() != 4 || q.size(0) != shape.batch ||
      q.size(1) != shape.num_heads || q.size(2) != tokens || q.size(3) != shape.head_dim ||
      k.sizes() != v.sizes() || k.size(0) != q.size(0) || k.size(1) != q.size(1) ||
      k.size(3) != q.size(3) || k.size(2) < 1) {
    throw Error(policy, "q must be [B, H, T, D] = [" + std::to_string(shape.batch) + ", " +
                            std::to_string(shape.num_heads) + ", " + std::to_string(tokens) + ", " +
                            std::to_string(shape.head_dim) +
                            "] and the prompt's k, v [B, H, L, D] with L >= 1");
  }
}

class DenseCrossPolicy : public CrossAttentionPolicy {
 public:
  DenseCrossPolicy(const ModelShape& shape, const nlohmann::json& settings) : shape_(shape) {
    configure(settings);
  }
  std::string name() const override { return "dense"; }
  at::Tensor attend(int layer, const at::Tensor& q, const at::Tensor& k, const at::Tensor& v,
                    const StepInfo& step) override {
    check_cross_inputs("dense cross-attention", shape_, layer, q, k, v, step);
    pairs_ += static_cast<double>(q.size(0) * q.size(1) * step.geometry.frames * k.size(2));
    return attention(q, k, v);
  }
  bool replayable() const override { return true; }
  CrossStats stats() const override { return {"dense", pairs_, pairs_}; }
  void reset() override { pairs_ = 0.0; }
  void configure(const nlohmann::json& settings) override {
    if (!settings.is_object())
      throw Error("dense cross-attention", "settings must be a JSON object");
    if (!settings.empty()) {
      throw Error("dense cross-attention",
                  "key '" + settings.begin().key() + "': unknown key (dense has none)");
    }
  }
  nlohmann::json settings() const override { return nlohmann::json::object(); }

 private:
  ModelShape shape_;
  double pairs_ = 0.0;
};

constexpr const char* kAnnCaWhere = "annca settings";

AnnCaSettings apply_annca_settings(AnnCaSettings base, const nlohmann::json& json) {
  if (!json.is_object()) throw Error(kAnnCaWhere, "settings must be a JSON object");
  for (const auto& [key, value] : json.items()) {
    if (key == "bits") {
      base.bits = static_cast<int>(read_int_setting(value, kAnnCaWhere, key, 1, 12));
    } else if (key == "tables") {
      base.tables = static_cast<int>(read_int_setting(value, kAnnCaWhere, key, 1, 16));
    } else if (key == "min_kept") {
      base.min_kept = read_int_setting(value, kAnnCaWhere, key, 1, 4096);
    } else if (key == "seed") {
      base.seed = static_cast<uint64_t>(read_int_setting(value, kAnnCaWhere, key, 0, INT64_MAX));
    } else {
      throw Error(kAnnCaWhere,
                  "key '" + key + "': unknown key (known: bits, tables, min_kept, seed)");
    }
  }
  return base;
}

class AnnCaPolicy : public CrossAttentionPolicy {
 public:
  AnnCaPolicy(const ModelShape& shape, const nlohmann::json& settings)
      : shape_(shape),
        settings_(apply_annca_settings(AnnCaSettings{}, settings)),
        counts_(CrossAttentionCounts::zeros(shape.device)) {
    make_projections();
  }
  std::string name() const override { return "annca"; }

  at::Tensor attend(int layer, const at::Tensor& q, const at::Tensor& k, const at::Tensor& v,
                    const StepInfo& step) override {
    check_cross_inputs("annca", shape_, layer, q, k, v, step);
    const int64_t rows = q.size(0) * q.size(1), d = q.size(3);
    const at::Tensor qr = q.reshape({rows, -1, d});
    const at::Tensor kr = k.reshape({rows, -1, d});
    const at::Tensor keep = annca_keep(qr, kr, projections_[static_cast<size_t>(layer)],
                                       step.geometry.frames, settings_.min_kept);
    counts_.prompt_pairs.add_(static_cast<double>(keep.numel()));
    counts_.kept_pairs.add_(keep.sum().to(at::kDouble));
    return kept_cross_attention(qr, kr, v.reshape({rows, -1, d}), keep).view(q.sizes());
  }
  bool replayable() const override { return false; }
  CrossStats stats() const override {
    return {"annca", counts_.prompt_pairs.item<double>(), counts_.kept_pairs.item<double>()};
  }
  void reset() override { counts_ = CrossAttentionCounts::zeros(shape_.device); }
  void configure(const nlohmann::json& settings) override {
    const AnnCaSettings next = apply_annca_settings(settings_, settings);
    const bool rehash = next.bits != settings_.bits || next.tables != settings_.tables ||
                        next.seed != settings_.seed;
    settings_ = next;
    if (rehash) make_projections();
  }
  nlohmann::json settings() const override {
    return {{"bits", settings_.bits},
            {"tables", settings_.tables},
            {"min_kept", settings_.min_kept},
            {"seed", settings_.seed}};
  }

 private:
  void make_projections() {
    projections_.clear();
    const int64_t b = shape_.batch, h = shape_.num_heads, d = shape_.head_dim;
    for (int layer = 0; layer < shape_.num_layers; ++layer) {
      std::vector<at::Tensor> tables;
      for (int t = 0; t < settings_.tables; ++t) {
        const uint64_t seed = settings_.seed * 1000003ull + static_cast<uint64_t>(layer) * 131ull +
                              static_cast<uint64_t>(t) + 0x616e6e6361ull;
        const at::Tensor per_head = lsh_projections(h, d, settings_.bits, seed, shape_.device);
        tables.push_back(per_head.unsqueeze(0)
                             .expand({b, h, d, settings_.bits})
                             .reshape({b * h, d, settings_.bits}));
      }
      projections_.push_back(std::move(tables));
    }
  }

  ModelShape shape_;
  AnnCaSettings settings_;
  std::vector<std::vector<at::Tensor>> projections_;  // [layer][table] [B·H, D, bits]
  CrossAttentionCounts counts_;
};

}  // namespace

CrossAttentionCounts CrossAttentionCounts::zeros(const at::Device& device) {
  const auto options = at::TensorOptions().dtype(at::kDouble).device(device);
  return {at::zeros({}, options), at::zeros({}, options)};
}

at::Tensor annca_keep(const at::Tensor& q, const at::Tensor& k,
                      const std::vector<at::Tensor>& projections, int frames, int64_t min_kept) {
  const int64_t rows = q.size(0), tokens = q.size(1), d = q.size(2), prompt = k.size(1);
  if (frames < 1 || tokens % frames != 0) {
    throw Error("annca", "a block of " + std::to_string(tokens) + " tokens is not " +
                             std::to_string(frames) + " whole frames");
  }
  const int64_t per_frame = tokens / frames;
  at::Tensor keep = at::zeros({rows, frames, prompt}, q.options().dtype(at::kBool));
  for (const at::Tensor& table : projections) {
    const int64_t buckets = int64_t{1} << table.size(2);
    const at::Tensor q_codes = lsh_codes(q, table).view({rows, frames, per_frame});
    const at::Tensor k_codes = lsh_codes(k, table);
    const at::Tensor present =
        at::zeros({rows, frames, buckets}, q.options().dtype(at::kFloat)).scatter_(2, q_codes, 1.0);
    keep.logical_or_(present.gather(2, k_codes.unsqueeze(1).expand({rows, frames, prompt})).gt(0));
  }
  // The tokens each frame's mean query scores highest are always kept.
  const int64_t floor = std::min(min_kept, prompt);
  const at::Tensor mean_query = q.to(at::kFloat).view({rows, frames, per_frame, d}).mean(2);
  const at::Tensor scores = at::bmm(mean_query, k.to(at::kFloat).transpose(1, 2));
  keep.scatter_(2, std::get<1>(scores.topk(floor, -1)), true);
  return keep;
}

at::Tensor kept_cross_attention(const at::Tensor& q, const at::Tensor& k, const at::Tensor& v,
                                const at::Tensor& keep) {
  const int64_t rows = q.size(0), tokens = q.size(1), d = q.size(2);
  const int64_t frames = keep.size(1), prompt = keep.size(2), per_frame = tokens / frames;
  // The one host read: the largest kept count fixes the gathered shape.
  const int64_t most = std::max<int64_t>(1, keep.sum(-1).max().item<int64_t>());
  at::Tensor unused, order;
  std::tie(unused, order) = at::sort(keep.logical_not().to(at::kInt), /*stable=*/true, -1, false);
  order = order.narrow(-1, 0, most);  // [R, F, most]: the kept tokens first
  const at::Tensor taken = keep.gather(-1, order);
  const at::Tensor flat =
      (order + at::arange(rows, order.options()).view({rows, 1, 1}) * prompt).reshape({-1});
  const auto gather = [&](const at::Tensor& x) {
    return x.reshape({rows * prompt, d}).index_select(0, flat).view({rows * frames, most, d});
  };
  const at::Tensor keys = gather(k), values = gather(v);
  const at::Tensor bias = at::where(taken, at::zeros({}, q.options().dtype(at::kFloat)),
                                    at::full({}, kPadBias, q.options().dtype(at::kFloat)))
                              .view({rows * frames, 1, most});
  const at::Tensor queries = q.reshape({rows * frames, per_frame, d});
#if TORCH_VERSION_MAJOR >= 2
  if (q.is_cuda()) {
    return at::scaled_dot_product_attention(
               queries.unsqueeze(1), keys.unsqueeze(1), values.unsqueeze(1),
               bias.to(q.scalar_type()).view({rows * frames, 1, 1, most}))
        .view({rows, tokens, d});
  }
#endif
  return chunked_attention(queries, keys, values, bias).view({rows, tokens, d});
}

at::Tensor kept_cross_attention_reference(const at::Tensor& q, const at::Tensor& k,
                                          const at::Tensor& v, const at::Tensor& keep) {
  const int64_t rows = q.size(0), tokens = q.size(1);
  const int64_t frames = keep.size(1), prompt = keep.size(2);
  const at::Tensor mask = keep.unsqueeze(2)
                              .expand({rows, frames, tokens / frames, prompt})
                              .reshape({rows, tokens, prompt});
  return reference_attention(q, k, v, mask);
}

std::unique_ptr<CrossAttentionPolicy> create_cross_policy(const std::string& name,
                                                          const ModelShape& shape,
                                                          const nlohmann::json& settings) {
  if (name == "dense") return std::make_unique<DenseCrossPolicy>(shape, settings);
  if (name == "annca") return std::make_unique<AnnCaPolicy>(shape, settings);
  throw Error("cross-attention policy", "unknown policy '" + name + "' (known: dense annca)");
}

std::vector<std::string> cross_policy_names() {
  return {"dense", "annca"};
}

}  // namespace wc::attention
