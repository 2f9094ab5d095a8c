// See bucket_attention.h and Note [AnnSA tiles].
#include "engine/attention/ann/bucket_attention.h"

#include <torch/version.h>

#include <algorithm>
#include <cmath>
#include <numeric>
#include <tuple>
#include <vector>

#include "engine/attention/biased_attention.h"
#include "engine/attention/sdpa.h"
#include "engine/core/error.h"

namespace wc::attention {
namespace {

constexpr const char* kWhere = "bucket attention";

void check_inputs(const BucketAttentionInputs& in) {
  const auto fail = [](const std::string& what) { throw Error(kWhere, what); };
  if (in.q.dim() != 3 || in.keys.dim() != 3 || in.values.dim() != 3 || in.current_keys.dim() != 3 ||
      in.current_values.dim() != 3) {
    fail("q, keys, values and the current block must be [R, T, D]");
  }
  const int64_t rows = in.q.size(0), d = in.q.size(2);
  for (const at::Tensor* t : {&in.keys, &in.values, &in.current_keys, &in.current_values}) {
    if (t->size(0) != rows || t->size(2) != d) fail("every tensor must have q's rows and D");
  }
  if (in.keys.size(1) != in.values.size(1) ||
      in.current_keys.size(1) != in.current_values.size(1)) {
    fail("keys and values must have one length");
  }
  if (in.q_codes.sizes() != in.q.sizes().slice(0, 2) ||
      in.key_codes.sizes() != in.keys.sizes().slice(0, 2)) {
    fail("codes must be [R, Tq] for the queries and [R, N] for the keys");
  }
  if (in.key_bias.defined() && in.key_bias.sizes() != in.keys.sizes().slice(0, 2)) {
    fail("the key bias must be [R, N]");
  }
  if (in.bits < 1 || in.bits > 10 || in.radius < 0 || in.tile < 1 || in.block < 1) {
    fail("bits must be in [1, 10], radius >= 0, tile and block >= 1");
  }
  if (in.current_keys.size(1) < 1) fail("the current block must hold at least one key");
}

// Queries of one row in tile order: indices sorted stably by bucket.
std::vector<int64_t> stable_order(const int64_t* codes, int64_t count) {
  std::vector<int64_t> order(static_cast<size_t>(count));
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(),
                   [&](int64_t a, int64_t b) { return codes[a] < codes[b]; });
  return order;
}

}  // namespace

BucketAttentionCounts BucketAttentionCounts::zeros(const at::Device& device) {
  const auto options = at::TensorOptions().dtype(at::kDouble).device(device);
  return {at::zeros({}, options), at::zeros({}, options), at::zeros({}, options),
          at::zeros({}, options)};
}

at::Tensor hamming_ball(int bits, int radius, const at::Device& device) {
  const auto options = at::TensorOptions().dtype(at::kLong).device(device);
  const at::Tensor codes = at::arange(int64_t{1} << bits, options);
  const at::Tensor differ = at::bitwise_xor(codes.view({-1, 1}), codes.view({1, -1}));
  at::Tensor distance = at::zeros_like(differ);
  for (int b = 0; b < bits; ++b) distance.add_(at::bitwise_and(differ, int64_t{1} << b).ne(0));
  return distance.le(radius);
}

at::Tensor bucket_mask(const BucketAttentionInputs& in) {
  check_inputs(in);
  const int64_t rows = in.q.size(0), tq = in.q.size(1), n = in.keys.size(1);
  const at::Tensor ball = hamming_ball(in.bits, in.radius, at::kCPU).contiguous();
  const at::Tensor q_codes = in.q_codes.to(at::kCPU, at::kLong).contiguous();
  const at::Tensor key_codes = in.key_codes.to(at::kCPU, at::kLong).contiguous();
  const int64_t buckets = int64_t{1} << in.bits;
  at::Tensor mask = at::zeros({rows, tq, n}, at::kBool);
  auto m = mask.accessor<bool, 3>();
  const bool* near = ball.data_ptr<bool>();
  for (int64_t r = 0; r < rows; ++r) {
    const int64_t* qc = q_codes.data_ptr<int64_t>() + r * tq;
    const int64_t* kc = key_codes.data_ptr<int64_t>() + r * n;
    const std::vector<int64_t> order = stable_order(qc, tq);
    for (int64_t first = 0; first < tq; first += in.tile) {
      const int64_t last = std::min(tq, first + in.tile);
      std::vector<bool> probe(static_cast<size_t>(buckets), false);
      for (int64_t i = first; i < last; ++i) {
        for (int64_t b = 0; b < buckets; ++b) {
          if (near[qc[order[static_cast<size_t>(i)]] * buckets + b])
            probe[static_cast<size_t>(b)] = true;
        }
      }
      for (int64_t i = first; i < last; ++i) {
        const int64_t query = order[static_cast<size_t>(i)];
        for (int64_t j = 0; j < n; ++j) {
          m[r][query][j] = kc[j] >= 0 && probe[static_cast<size_t>(kc[j])];
        }
      }
    }
  }
  return mask.to(in.q.device());
}

at::Tensor bucket_attention_reference(const BucketAttentionInputs& in) {
  const at::Tensor history = bucket_mask(in);
  const int64_t rows = in.q.size(0), tq = in.q.size(1), t = in.current_keys.size(1);
  const at::Tensor mask = at::cat({history, at::ones({rows, tq, t}, history.options())}, 2);
  const at::Tensor keys = at::cat({in.keys, in.current_keys}, 1);
  const at::Tensor values = at::cat({in.values, in.current_values}, 1);
  std::optional<at::Tensor> bias;
  if (in.key_bias.defined()) {
    bias = at::cat({in.key_bias.to(at::kFloat),
                    at::zeros({rows, t}, in.key_bias.options().dtype(at::kFloat))},
                   1)
               .unsqueeze(1);
  }
  return reference_attention(in.q, keys, values, mask, bias);
}

AttentionWithLse attention_with_lse(const at::Tensor& q, const at::Tensor& k, const at::Tensor& v,
                                    const at::Tensor& bias) {
  const int64_t rows = q.size(0), tq = q.size(1), tk = k.size(1), d = q.size(2);
  const double scale = 1.0 / std::sqrt(static_cast<double>(d));
#if TORCH_VERSION_MAJOR >= 2
  if (q.is_cuda()) {
    std::optional<at::Tensor> bias4;
    if (bias.defined()) bias4 = bias.to(q.scalar_type()).unsqueeze(1).expand({rows, 1, tq, tk});
    auto result = at::_scaled_dot_product_efficient_attention(
        q.unsqueeze(1), k.unsqueeze(1), v.unsqueeze(1), bias4, /*compute_log_sumexp=*/true);
    return {std::get<0>(result).squeeze(1),
            std::get<1>(result).squeeze(1).narrow(1, 0, tq).to(at::kFloat)};
  }
#endif
  // Float32 by slabs of rows into one reused logit buffer of about kChunkLogits floats (Note
  // [Chunked CPU attention]: fresh logit tensors per call cost more in page faults than in math).
  const at::Tensor qf = q.to(at::kFloat).mul(scale);
  const at::Tensor kt = k.to(at::kFloat).transpose(1, 2);
  const at::Tensor vf = v.to(at::kFloat);
  const at::Tensor bf = bias.defined() ? bias.to(at::kFloat) : at::Tensor();
  at::Tensor out = at::empty({rows, tq, v.size(2)}, qf.options());
  at::Tensor lse = at::empty({rows, tq}, qf.options());
  const int64_t slab = std::clamp<int64_t>(kChunkLogits / std::max<int64_t>(1, tq * tk), 1,
                                           std::max<int64_t>(rows, 1));
  at::Tensor logits = at::empty({slab, tq, tk}, qf.options());
  for (int64_t r = 0; r < rows; r += slab) {
    const int64_t nr = std::min(slab, rows - r);
    at::Tensor l = logits.narrow(0, 0, nr);
    at::bmm_out(l, qf.narrow(0, r, nr), kt.narrow(0, r, nr));
    if (bf.defined()) l.add_(bf.narrow(0, r, nr));
    at::Tensor row_lse = lse.narrow(0, r, nr);
    at::logsumexp_out(row_lse, l, {-1}, /*keepdim=*/false);
    l.sub_(row_lse.unsqueeze(-1)).exp_();
    at::Tensor slab_out = out.narrow(0, r, nr);
    at::bmm_out(slab_out, l, vf.narrow(0, r, nr));
  }
  return {out.to(q.scalar_type()), lse};
}

at::Tensor bucket_attention(const BucketAttentionInputs& in, BucketAttentionCounts* counts) {
  check_inputs(in);
  const int64_t rows = in.q.size(0), tq = in.q.size(1), d = in.q.size(2);
  const int64_t n = in.keys.size(1);
  const at::Tensor q = in.q;
  const AttentionWithLse current = attention_with_lse(q, in.current_keys, in.current_values, {});
  if (n == 0) return current.out;
  const auto float_options = q.options().dtype(at::kFloat);
  const int64_t buckets = int64_t{1} << in.bits;
  const at::Tensor ball = hamming_ball(in.bits, in.radius, q.device()).to(at::kFloat);

  // Queries in tile order, padded to whole tiles with copies of the row's last bucket (which
  // widen no probe set); their outputs are dropped.
  const int64_t tile = std::min(in.tile, tq);
  const int64_t tiles = (tq + tile - 1) / tile;
  const int64_t padded = tiles * tile;
  at::Tensor q_sorted_codes, q_order;
  std::tie(q_sorted_codes, q_order) = at::sort(in.q_codes, /*stable=*/true, 1, false);
  at::Tensor q_tiles = q.gather(1, q_order.unsqueeze(-1).expand({rows, tq, d}));
  at::Tensor tile_codes = q_sorted_codes;
  if (padded > tq) {
    q_tiles = at::cat({q_tiles, at::zeros({rows, padded - tq, d}, q.options())}, 1);
    tile_codes =
        at::cat({tile_codes, q_sorted_codes.narrow(1, tq - 1, 1).expand({rows, padded - tq})}, 1);
  }
  // Each tile's probe set [R, tiles, buckets]: the union of its queries' Hamming balls.
  const at::Tensor present_q = at::zeros({rows, tiles, buckets}, float_options)
                                   .scatter_(2, tile_codes.view({rows, tiles, tile}), 1.0);
  const at::Tensor probe = at::matmul(present_q, ball).gt(0);

  // History keys in bucket order, in blocks, plus one empty block (index `blocks`) that tiles
  // needing fewer blocks than the neediest point at.
  const int64_t block = in.block;
  const int64_t blocks = (n + block - 1) / block;
  const int64_t slots = (blocks + 1) * block;
  at::Tensor k_sorted_codes, k_order;
  std::tie(k_sorted_codes, k_order) = at::sort(in.key_codes, /*stable=*/true, 1, false);
  const at::Tensor by_row = k_order.unsqueeze(-1).expand({rows, n, d});
  const auto pad_to_slots = [&](const at::Tensor& x, double fill) {
    std::vector<int64_t> sizes = x.sizes().vec();
    sizes[1] = slots - n;
    return at::cat({x, at::full(sizes, fill, x.options())}, 1);
  };
  const at::Tensor keys = pad_to_slots(in.keys.gather(1, by_row), 0.0);
  const at::Tensor values = pad_to_slots(in.values.gather(1, by_row), 0.0);
  const at::Tensor codes = pad_to_slots(k_sorted_codes, -1.0);
  const at::Tensor key_bias = in.key_bias.defined()
                                  ? pad_to_slots(in.key_bias.to(at::kFloat).gather(1, k_order), 0.0)
                                  : at::zeros({rows, slots}, float_options);
  // Which buckets each block holds [R, blocks, buckets], and which blocks each tile needs.
  const at::Tensor block_codes = codes.narrow(1, 0, blocks * block).view({rows, blocks, block});
  const at::Tensor present_k =
      at::zeros({rows, blocks, buckets}, float_options)
          .scatter_add_(2, block_codes.clamp_min(0), block_codes.ge(0).to(at::kFloat));
  const at::Tensor need = at::bmm(probe.to(at::kFloat), present_k.transpose(1, 2)).gt(0);
  if (counts != nullptr) {
    const at::Tensor held = in.key_codes.ge(0).sum(1).to(at::kDouble);  // [R]
    counts->history_pairs.add_(held.sum() * static_cast<double>(tq));
    const at::Tensor per_bucket = present_k.sum(1).to(at::kDouble);  // [R, buckets]
    counts->largest_bucket.copy_(
        at::maximum(counts->largest_bucket, (per_bucket.amax(1) / held.clamp_min(1.0)).max()));
  }
  // The one host read: the neediest tile's block count fixes the gathered shape.
  const int64_t most = need.sum(-1).max().item<int64_t>();
  if (most == 0) return current.out;
  // The needed blocks of each tile first, in block order; the rest point at the empty block.
  at::Tensor unused, order;
  std::tie(unused, order) = at::sort(need.logical_not().to(at::kInt), /*stable=*/true, 2, false);
  at::Tensor taken = order.narrow(2, 0, most);
  taken = at::where(need.gather(2, taken), taken, at::full({}, blocks, taken.options()));
  const at::Tensor flat =
      (taken + at::arange(rows, taken.options()).view({rows, 1, 1}) * (blocks + 1)).view({-1});
  const int64_t gathered = most * block;
  const auto gather_blocks = [&](const at::Tensor& x) {
    std::vector<int64_t> sizes = {rows * (blocks + 1), block};
    if (x.dim() == 3) sizes.push_back(x.size(2));
    std::vector<int64_t> out = {rows * tiles, gathered};
    if (x.dim() == 3) out.push_back(x.size(2));
    return x.reshape(sizes).index_select(0, flat).view(out);
  };
  const at::Tensor tile_keys = gather_blocks(keys);
  const at::Tensor tile_values = gather_blocks(values);
  const at::Tensor tile_key_codes = gather_blocks(codes);
  // Key by key, the gathered keys outside the tile's probe set get the pad bias.
  const at::Tensor allowed =
      probe.view({rows * tiles, buckets}).gather(1, tile_key_codes.clamp_min(0)) &
      tile_key_codes.ge(0);
  const at::Tensor bias =
      at::where(allowed, gather_blocks(key_bias), at::full({}, kPadBias, float_options))
          .unsqueeze(1);
  const AttentionWithLse history =
      attention_with_lse(q_tiles.reshape({rows * tiles, tile, d}), tile_keys, tile_values, bias);

  // Back to the queries' own order, then the two halves merged by their log-sum-exps.
  const at::Tensor back = q_order.unsqueeze(-1).expand({rows, tq, d});
  const at::Tensor out_h =
      at::empty({rows, tq, d}, float_options)
          .scatter_(1, back,
                    history.out.reshape({rows, padded, d}).narrow(1, 0, tq).to(at::kFloat));
  const at::Tensor lse_h =
      at::empty({rows, tq}, float_options)
          .scatter_(1, q_order, history.lse.reshape({rows, padded}).narrow(1, 0, tq));
  const at::Tensor top = at::maximum(current.lse, lse_h);
  const at::Tensor w_c = (current.lse - top).exp_().unsqueeze(-1);
  const at::Tensor w_h = (lse_h - top).exp_().unsqueeze(-1);
  const at::Tensor out = (current.out.to(at::kFloat) * w_c + out_h * w_h) / (w_c + w_h);

  if (counts != nullptr) {
    // Real queries per tile: whole tiles but the last.
    at::Tensor real = at::full({tiles}, static_cast<double>(tile), float_options);
    real[tiles - 1].fill_(static_cast<double>(tq - (tiles - 1) * tile));
    const at::Tensor allowed_per_tile = allowed.sum(-1).view({rows, tiles}).to(at::kFloat);
    counts->allowed_pairs.add_((allowed_per_tile * real).sum().to(at::kDouble));
    counts->gathered_pairs.add_(static_cast<double>(rows * padded * gathered));
  }
  return out.to(q.scalar_type());
}

}  // namespace wc::attention
