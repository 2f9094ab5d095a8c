// See ops.h. Note [3D RoPE] lives here.
#include "engine/model/ops.h"

#include <vector>

namespace wc::model {

at::Tensor rms_norm(const at::Tensor& x, const at::Tensor& weight, double eps) {
  const at::Tensor xf = x.to(at::kFloat);
  const at::Tensor normed = xf * at::rsqrt(xf.pow(2).mean(-1, /*keepdim=*/true) + eps);
  return (normed * weight.to(at::kFloat)).to(x.scalar_type());
}

at::Tensor layer_norm(const at::Tensor& x, double eps) {
  return at::layer_norm(x.to(at::kFloat), {x.size(-1)}, {}, {}, eps).to(x.scalar_type());
}

namespace {

// [B, F·N, D] -> [B, F, N, D]
at::Tensor by_frame(const at::Tensor& x, int64_t frames) {
  return x.view({x.size(0), frames, x.size(1) / frames, x.size(2)});
}

}  // namespace

at::Tensor modulate(const at::Tensor& x, const at::Tensor& shift, const at::Tensor& scale) {
  const int64_t frames = shift.size(1);
  // One pass over the tokens (addcmul) instead of a multiply and an add.
  return at::addcmul(shift.unsqueeze(2), by_frame(x, frames), 1 + scale.unsqueeze(2))
      .view(x.sizes());
}

at::Tensor gated_residual(const at::Tensor& x, const at::Tensor& y, const at::Tensor& gate) {
  const int64_t frames = gate.size(1);
  return at::addcmul(by_frame(x, frames), by_frame(y, frames), gate.unsqueeze(2)).view(x.sizes());
}

at::Tensor timestep_embedding(const at::Tensor& t, int dim) {
  const int half = dim / 2;
  const at::Tensor exponents =
      at::arange(half, at::TensorOptions().dtype(at::kDouble).device(t.device())) / half;
  const at::Tensor omega = at::pow(10000.0, -exponents);
  const at::Tensor args = (t.to(at::kDouble) * 1000.0).unsqueeze(-1) * omega;
  return at::cat({at::cos(args), at::sin(args)}, -1).to(at::kFloat);
}

// Note [3D RoPE]
// Each head's dimension is split into D/2 rotation pairs; the first `time` pairs rotate by the
// token's absolute frame index, the next `row` pairs by its row, the last `column` pairs by its
// column, each axis with frequencies θ^(−2j/axis_dim) (Wan 2.1's rope_params per axis). RoPE is
// applied to q and k before the AttentionPolicy sees them, so cached keys carry their absolute
// position and never need re-rotation. Positions are absolute frame indices: a rollout of n
// frames presents time offsets up to n to the model, so long play needs training that covers
// large offsets (or relative re-alignment of the cache), which is for training to provide.

RopeSplit rope_split(int head_dim) {
  const int pairs = head_dim / 2;
  RopeSplit split;
  split.row = head_dim / 6;
  split.column = head_dim / 6;
  split.time = pairs - split.row - split.column;
  return split;
}

RopeTable rope_table(int64_t frame_start, int frames, int grid_h, int grid_w, int head_dim,
                     double theta) {
  const at::Tensor positions =
      at::arange(frames, at::TensorOptions().dtype(at::kDouble)) + static_cast<double>(frame_start);
  return rope_table_at(positions, grid_h, grid_w, head_dim, theta);
}

RopeTable rope_table_at(const at::Tensor& frame_positions, int grid_h, int grid_w, int head_dim,
                        double theta) {
  TORCH_CHECK(frame_positions.dim() == 1 || frame_positions.dim() == 2,
              "rope_table_at: positions must be [F] or [B, F], got ", frame_positions.sizes());
  const RopeSplit split = rope_split(head_dim);
  const auto dbl = at::TensorOptions().dtype(at::kDouble);
  // Per axis: outer(position, θ^(−2j/axis_dim)) for j < pairs of that axis.
  const auto frequencies = [&](int count) {
    return at::pow(theta, -2.0 * at::arange(count, dbl) / (2.0 * count));
  };
  const at::Tensor positions = frame_positions.to(at::kCPU, at::kDouble);
  const bool batched = positions.dim() == 2;
  const int64_t b = batched ? positions.size(0) : 1;
  const int64_t frames = positions.size(-1);
  // [B, F, pairs]
  const at::Tensor time =
      positions.reshape({b, frames, 1}) * frequencies(split.time).view({1, 1, -1});
  const at::Tensor row = at::outer(at::arange(grid_h, dbl), frequencies(split.row));
  const at::Tensor column = at::outer(at::arange(grid_w, dbl), frequencies(split.column));
  const at::Tensor grid = at::cat(
      {time.view({b, frames, 1, 1, split.time}).expand({b, frames, grid_h, grid_w, split.time}),
       row.view({1, 1, grid_h, 1, split.row}).expand({b, frames, grid_h, grid_w, split.row}),
       column.view({1, 1, 1, grid_w, split.column})
           .expand({b, frames, grid_h, grid_w, split.column})},
      -1);
  const int64_t tokens = frames * grid_h * grid_w;
  // Batched tables broadcast over heads: [B, 1, T, pairs] against q/k [B, H, T, pairs].
  const at::Tensor flat =
      batched ? grid.reshape({b, 1, tokens, head_dim / 2}) : grid.reshape({tokens, head_dim / 2});
  return {at::cos(flat).to(at::kFloat), at::sin(flat).to(at::kFloat)};
}

at::Tensor apply_rope(const at::Tensor& x, const RopeTable& table) {
  const at::Tensor cos = table.cos.to(x.device(), x.scalar_type());
  const at::Tensor sin = table.sin.to(x.device(), x.scalar_type());
  std::vector<int64_t> pair_shape(x.sizes().begin(), x.sizes().end());
  pair_shape.back() /= 2;
  pair_shape.push_back(2);
  const at::Tensor pairs = x.reshape(pair_shape);
  const at::Tensor a = pairs.select(-1, 0);
  const at::Tensor b = pairs.select(-1, 1);
  return at::stack({a * cos - b * sin, a * sin + b * cos}, -1).reshape(x.sizes());
}

RopeRotation rope_rotation(const RopeTable& table, at::Device device, at::ScalarType dtype) {
  const at::Tensor cos = table.cos.to(device, dtype);
  const at::Tensor sin = table.sin.to(device, dtype);
  return {at::stack({cos, cos}, -1).flatten(-2), at::stack({-sin, sin}, -1).flatten(-2)};
}

at::Tensor apply_rotation(const at::Tensor& x, const RopeRotation& rotation) {
  std::vector<int64_t> pair_shape(x.sizes().begin(), x.sizes().end());
  pair_shape.back() /= 2;
  pair_shape.push_back(2);
  const at::Tensor swapped = x.reshape(pair_shape).flip(-1).view(x.sizes());  // (b, a) per pair
  return x * rotation.cos + swapped * rotation.sin_signed;
}

at::Tensor patchify(const at::Tensor& frames, int patch_h, int patch_w) {
  const int64_t b = frames.size(0), f = frames.size(1), c = frames.size(2);
  const int64_t gh = frames.size(3) / patch_h, gw = frames.size(4) / patch_w;
  return frames.reshape({b, f, c, gh, patch_h, gw, patch_w})
      .permute({0, 1, 3, 5, 2, 4, 6})
      .reshape({b, f * gh * gw, c * patch_h * patch_w});
}

at::Tensor unpatchify(const at::Tensor& tokens, int frames, int grid_h, int grid_w, int channels,
                      int patch_h, int patch_w) {
  const int64_t b = tokens.size(0);
  return tokens.reshape({b, frames, grid_h, grid_w, channels, patch_h, patch_w})
      .permute({0, 1, 4, 2, 5, 3, 6})
      .reshape({b, frames, channels, int64_t{grid_h} * patch_h, int64_t{grid_w} * patch_w});
}

at::Tensor block_causal_mask(int frames, int tokens_per_frame, int frames_per_block) {
  const int64_t tokens = static_cast<int64_t>(frames) * tokens_per_frame;
  const int64_t per_block = static_cast<int64_t>(frames_per_block) * tokens_per_frame;
  const at::Tensor block = at::arange(tokens, at::kLong).div(per_block, "floor");
  return block.unsqueeze(1) >= block.unsqueeze(0);
}

}  // namespace wc::model
