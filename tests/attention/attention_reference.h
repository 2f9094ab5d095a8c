// Test helpers for the dense / headcast policies: fresh random seeds (printed on failure), random
// rollout inputs, and the naive reference: full softmax over all raw blocks with an explicit mask.
#pragma once

#include <ATen/ATen.h>
#include <gtest/gtest.h>

#include <cstdint>
#include <functional>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "engine/attention/attention_policy.h"
#include "engine/attention/sdpa.h"
#include "engine/attention/step_info.h"

namespace wc::attention::testing {

// A fresh seed per call (std::random_device) so every run sees new inputs; tests print it with
// SCOPED_TRACE so a failure can be replayed.
inline uint64_t fresh_seed() {
  std::random_device device;
  return (static_cast<uint64_t>(device()) << 32) ^ device();
}

inline std::string seed_trace(uint64_t seed) {
  return "seed = " + std::to_string(seed);
}

// One forward's q/k/v for a block: [B, H, T, D].
struct Qkv {
  at::Tensor q, k, v;
};

inline Qkv random_qkv(const ModelShape& shape, at::Generator& gen, double scale = 1.0) {
  const std::vector<int64_t> sizes = {shape.batch, shape.num_heads,
                                      shape.geometry.tokens_per_block(), shape.head_dim};
  const auto options = at::TensorOptions().dtype(at::kFloat);
  return Qkv{at::randn(sizes, gen, options) * scale, at::randn(sizes, gen, options) * scale,
             at::randn(sizes, gen, options)};
}

inline StepInfo step_info(const ModelShape& shape, int64_t block, int step, int steps, bool clean) {
  StepInfo info;
  info.block_index = block;
  info.denoise_step = step;
  info.num_denoise_steps = steps;
  info.noise_level = clean ? 0.0 : 1.0 - static_cast<double>(step) / steps;
  info.clean_pass = clean;
  info.geometry = shape.geometry;
  return info;
}

// Frames each head may see besides the current block; cell_of(head, y, x) returns the spatial
// cell of a position for heads restricted to cells, or -1 for heads that see the whole frame.
struct Visibility {
  std::vector<std::set<int64_t>> held;  // [head] frame indices
  std::function<int(int head, int y, int x)> cell_of;
};

// Naive attention of `current` (block `block`) against the committed K/V of blocks [0, block) in
// `history` (one entry per block, [B, H, T, D]) with an explicit [H, T, S] mask.
inline at::Tensor masked_reference(const ModelShape& shape, const std::vector<Qkv>& history,
                                   const Qkv& current, int64_t block, const Visibility& vis) {
  const auto& g = shape.geometry;
  const int64_t tokens = g.tokens_per_block();
  const int64_t frame_tokens = g.tokens_per_frame();
  std::vector<at::Tensor> ks, vs;
  for (int64_t b = 0; b < block; ++b) {
    ks.push_back(history[static_cast<size_t>(b)].k.to(at::kFloat).cpu());
    vs.push_back(history[static_cast<size_t>(b)].v.to(at::kFloat).cpu());
  }
  ks.push_back(current.k.to(at::kFloat).cpu());
  vs.push_back(current.v.to(at::kFloat).cpu());
  const at::Tensor k = at::cat(ks, 2);
  const at::Tensor v = at::cat(vs, 2);
  const int64_t keys = k.size(2);
  at::Tensor mask = at::zeros({shape.num_heads, tokens, keys}, at::kBool);
  auto acc = mask.accessor<bool, 3>();
  for (int h = 0; h < shape.num_heads; ++h) {
    for (int64_t j = 0; j < keys; ++j) {
      const int64_t frame = j / frame_tokens;
      const bool in_current = frame >= block * g.frames;
      if (!in_current && vis.held[static_cast<size_t>(h)].count(frame) == 0) continue;
      const int ky = static_cast<int>((j % frame_tokens) / g.grid_w);
      const int kx = static_cast<int>(j % g.grid_w);
      for (int64_t i = 0; i < tokens; ++i) {
        const int qy = static_cast<int>((i % frame_tokens) / g.grid_w);
        const int qx = static_cast<int>(i % g.grid_w);
        const int qc = vis.cell_of ? vis.cell_of(h, qy, qx) : -1;
        acc[h][i][j] = qc < 0 || qc == vis.cell_of(h, ky, kx);
      }
    }
  }
  return reference_attention(current.q.to(at::kFloat).cpu(), k, v, mask.unsqueeze(0));
}

// The frames a sliding window with sink keeps after `committed` frames (window 0 = all).
inline std::set<int64_t> window_frames(int64_t committed, int frames_per_block, int64_t window) {
  std::set<int64_t> frames;
  for (int64_t f = 0; f < committed; ++f) {
    if (window == 0 || f < frames_per_block || f >= committed - (window - frames_per_block)) {
      frames.insert(f);
    }
  }
  return frames;
}

inline std::set<int64_t> block_frames(int64_t block, int frames_per_block) {
  std::set<int64_t> frames;
  for (int f = 0; f < frames_per_block; ++f) frames.insert(block * frames_per_block + f);
  return frames;
}

inline double max_abs_diff(const at::Tensor& a, const at::Tensor& b) {
  return (a.to(at::kFloat).cpu() - b.to(at::kFloat).cpu()).abs().max().item<double>();
}

}  // namespace wc::attention::testing
