// Test helpers for TempCache: the plain-loop correspondence search (the reference the vectorised
// matcher is checked against) and a rollout driver.
#pragma once

#include <ATen/ATen.h>

#include <algorithm>
#include <cmath>
#include <utility>
#include <vector>

#include "engine/attention/attention_policy.h"
#include "engine/attention/tempcache/temp_cache_match.h"

namespace wc::attention::testing {

inline double cosine(const at::Tensor& a, const at::Tensor& b) {
  const at::Tensor x = a.to(at::kDouble);
  const at::Tensor y = b.to(at::kDouble);
  return (x * y).sum().item<double>() /
         std::max(x.norm().item<double>() * y.norm().item<double>(), 1e-24);
}

// Note [TempCache matching], one key at a time.
inline at::Tensor loop_match(const MatchInputs& in) {
  const int64_t rows = in.new_keys.size(0);
  const int64_t n = in.new_keys.size(1);
  const int64_t d = in.new_keys.size(2);
  const at::Tensor entries = in.entry_keys.narrow(2, 0, d).cpu();
  const at::Tensor codes = in.entry_codes.cpu();
  const at::Tensor valid = in.entry_valid.cpu();
  const at::Tensor seq = in.entry_seq.cpu();
  const at::Tensor keys = in.new_keys.cpu();
  at::Tensor out = at::full({rows, n}, kNoEntry, at::kLong);
  if (in.tau >= 1.0) return out;
  for (int64_t r = 0; r < rows; ++r) {
    // The row's entries, newest (largest seq) first.
    std::vector<std::pair<int64_t, int64_t>> by_age;
    for (int64_t s = 0; s < in.capacity; ++s) {
      if (valid[r][s].item<bool>()) by_age.emplace_back(seq[r][s].item<int64_t>(), s);
    }
    std::sort(by_age.rbegin(), by_age.rend());
    for (int64_t i = 0; i < n; ++i) {
      const at::Tensor k = keys[r][i];
      const int64_t co = in.colocated[r][i].item<int64_t>();
      if (co >= 0 && valid[r][co].item<bool>() && cosine(k, entries[r][co]) >= in.tau) {
        out[r][i] = co;
        continue;
      }
      if (in.bits == 0) continue;
      const int64_t code = in.new_codes[r][i].item<int64_t>();
      std::vector<int64_t> bucket;
      for (const auto& [age, s] : by_age) {
        if (static_cast<int>(bucket.size()) == in.candidates) break;
        if (codes[r][s].item<int64_t>() == code) bucket.push_back(s);
      }
      int64_t best = kNoEntry;
      double best_cos = -2.0;
      for (int64_t s : bucket) {
        const double c = cosine(k, entries[r][s]);
        if (c > best_cos) {
          best_cos = c;
          best = s;
        }
      }
      if (best >= 0 && best_cos >= in.tau) out[r][i] = best;
    }
  }
  return out;
}

// attend (clean pass) + commit of one block; returns the attention output.
inline at::Tensor run_block(AttentionPolicy& policy, const ModelShape& shape, int64_t block,
                            const at::Tensor& q, const at::Tensor& k, const at::Tensor& v) {
  StepInfo step;
  step.block_index = block;
  step.clean_pass = true;
  step.noise_level = 0.0;
  step.geometry = shape.geometry;
  at::Tensor out = policy.attend(0, q, k, v, step).clone();
  for (int l = 1; l < shape.num_layers; ++l) policy.attend(l, q, k, v, step);
  for (int l = 0; l < shape.num_layers; ++l) policy.commit(l, k, v, step);
  return out;
}

}  // namespace wc::attention::testing
