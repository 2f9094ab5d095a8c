// See annsa_policy.h and Note [AnnSA tiles].
#include "engine/attention/ann/annsa_policy.h"

#include "engine/attention/tempcache/temp_cache_match.h"
#include "engine/core/error.h"

namespace wc::attention {
namespace {

// The settings without (or with only) the ann_* keys.
nlohmann::json split(const nlohmann::json& settings, bool ann) {
  if (!settings.is_object()) return settings;
  nlohmann::json part = nlohmann::json::object();
  for (const auto& [key, value] : settings.items()) {
    if (is_ann_key(key) == ann) part[key] = value;
  }
  return part;
}

const char* where_of(bool merged) {
  return merged ? "fast-ar settings" : "annsa settings";
}

// Refuses keys neither the history nor AnnSA knows, naming the ones they do.
void check_keys(const nlohmann::json& settings, bool merged) {
  if (!settings.is_object()) throw Error(where_of(merged), "settings must be a JSON object");
  for (const auto& [key, value] : settings.items()) {
    if (is_ann_key(key) || key == "window" || (merged && is_tempcache_key(key))) continue;
    throw Error(where_of(merged),
                "key '" + key + "': unknown key (known: window, " +
                    (merged ? std::string("tau, budget, budget_frames, budget_rule, lsh_bits, "
                                          "lsh_candidates, seed, bias_path, ")
                            : std::string()) +
                    kAnnKeyList + ")");
  }
}

}  // namespace

AnnsaPolicy::AnnsaPolicy(const ModelShape& shape, const nlohmann::json& settings, bool merged)
    : shape_(shape), counts_(BucketAttentionCounts::zeros(shape.device)) {
  check_keys(settings, merged);
  ann_ = apply_ann_settings(AnnSettings{}, split(settings, true), where_of(merged));
  if (merged) {
    merged_ = std::make_unique<TempCachePolicy>(shape, split(settings, false));
  } else {
    window_ = std::make_unique<DensePolicy>(shape, split(settings, false));
  }
  make_projections();
}

at::Tensor ann_head_projections(const AnnSettings& settings, int layer, int64_t heads,
                                int64_t head_dim, const at::Device& device) {
  return lsh_projections(heads, head_dim, settings.bits,
                         tempcache_store_seed(settings.seed, layer, 7), device);
}

void read_ann_counts(const BucketAttentionCounts& counts, PolicyStats& stats) {
  stats.ann.history_pairs = counts.history_pairs.item<double>();
  stats.ann.allowed_pairs = counts.allowed_pairs.item<double>();
  stats.ann.gathered_pairs = counts.gathered_pairs.item<double>();
  stats.ann.largest_bucket = counts.largest_bucket.item<double>();
}

void AnnsaPolicy::make_projections() {
  projections_.clear();
  const int64_t b = shape_.batch, h = shape_.num_heads, d = shape_.head_dim;
  for (int layer = 0; layer < shape_.num_layers; ++layer) {
    const at::Tensor per_head = ann_head_projections(ann_, layer, h, d, shape_.device);
    projections_.push_back(
        per_head.unsqueeze(0).expand({b, h, d, ann_.bits}).reshape({b * h, d, ann_.bits}));
  }
}

void AnnsaPolicy::reset() {
  if (merged_) merged_->reset();
  if (window_) window_->reset();
  counts_ = BucketAttentionCounts::zeros(shape_.device);
}

BucketAttentionInputs AnnsaPolicy::inputs(int layer, const at::Tensor& q, const at::Tensor& k,
                                          const at::Tensor& v) const {
  const int64_t rows = int64_t{shape_.batch} * shape_.num_heads, d = shape_.head_dim;
  const at::Tensor& projections = projections_[static_cast<size_t>(layer)];
  BucketAttentionInputs in;
  in.q = q.reshape({rows, -1, d});
  in.current_keys = k.reshape({rows, -1, d});
  in.current_values = v.reshape({rows, -1, d});
  in.q_codes = lsh_codes(in.q, projections);
  if (merged_) {
    const TempCacheStore::History history = merged_->store(layer).history();
    in.keys = history.keys.reshape({rows, -1, d});
    in.values = history.values.reshape({rows, -1, d});
    in.key_bias = history.bias.reshape({rows, -1});
    in.key_codes = at::where(history.valid.reshape({rows, -1}), lsh_codes(in.keys, projections),
                             at::full({}, int64_t{-1}, in.q_codes.options()));
  } else {
    const WindowStore& store = window_->store(layer);
    in.keys = store.held_keys().reshape({rows, -1, d});
    in.values = store.held_values().reshape({rows, -1, d});
    in.key_codes = lsh_codes(in.keys, projections);
  }
  in.bits = ann_.bits;
  in.radius = ann_.radius;
  in.tile = ann_.tile;
  in.block = ann_.block;
  return in;
}

at::Tensor AnnsaPolicy::attend(int layer, const at::Tensor& q, const at::Tensor& k,
                               const at::Tensor& v, const StepInfo& step) {
  const std::string policy = name();
  check_attention_inputs(policy.c_str(), shape_, layer, q, k, v, step);
  PathScope scope(timer_, merged_ ? "fast-ar" : "annsa");
  return bucket_attention(inputs(layer, q, k, v), &counts_).view(q.sizes());
}

void AnnsaPolicy::commit(int layer, const at::Tensor& k, const at::Tensor& v,
                         const StepInfo& step) {
  if (merged_) {
    merged_->commit(layer, k, v, step);
  } else {
    window_->commit(layer, k, v, step);
  }
}

PolicyStats AnnsaPolicy::stats() const {
  PolicyStats stats = merged_ ? merged_->stats() : window_->stats();
  stats.policy = name();
  read_ann_counts(counts_, stats);
  return stats;
}

void AnnsaPolicy::configure(const nlohmann::json& settings) {
  const char* where = where_of(merged_ != nullptr);
  check_keys(settings, merged_ != nullptr);
  const AnnSettings ann = apply_ann_settings(ann_, split(settings, true), where);
  const nlohmann::json own = split(settings, false);
  if (!own.empty()) {
    if (merged_) {
      merged_->configure(own);
    } else {
      window_->configure(own);
    }
  }
  const bool rehash = ann.bits != ann_.bits || ann.seed != ann_.seed;
  ann_ = ann;
  if (rehash) make_projections();
}

nlohmann::json AnnsaPolicy::settings() const {
  nlohmann::json json = merged_ ? merged_->settings() : window_->settings();
  json.update(ann_settings_json(ann_));
  return json;
}

std::unique_ptr<AttentionPolicy> make_annsa_policy(const ModelShape& shape,
                                                   const nlohmann::json& settings) {
  return std::make_unique<AnnsaPolicy>(shape, settings, false);
}

std::unique_ptr<AttentionPolicy> make_fast_ar_policy(const ModelShape& shape,
                                                     const nlohmann::json& settings) {
  return std::make_unique<AnnsaPolicy>(shape, settings, true);
}

}  // namespace wc::attention
