// The training stream's attention (Note [Masked training] in engine/train/token_batch.h) computed
// by query frame, at the cost of the pairs it allows rather than of the whole stream squared.
#pragma once

#include <ATen/ATen.h>

#include <vector>

namespace wc::model {

// Note [Masked stream attention]
// A training stream is `frames` clean frames, frame i attending to frames 0..i, followed by one
// masked copy per entry of `copies`, the copy of frame c attending to the clean frames 0..c−1 and
// to itself. Written as one [T, T] mask over the stream's T tokens, attention costs T² pairs
// though under half of them are allowed, and the fused kernels that take a mask are slower than
// the ones that take none. masked_stream_attention computes the same outputs by query frame
// instead: the clean frames in groups of `group_frames` against the prefix of frames the group's
// last frame may see (a block-causal mask inside the group only; none when a group is one frame),
// and each copy against the clean frames before its own and itself, without a mask. Every row's
// softmax runs over exactly the keys the mask allows, so the two agree up to summation order;
// mask() is the reference the tests compare against.
struct MaskedStream {
  int frames = 0;
  std::vector<int> copies;  // the frame each masked copy draws, each in [0, frames]
  int tokens_per_frame = 0;

  int stream_frames() const { return frames + static_cast<int>(copies.size()); }
  // The [T, T] boolean mask of the stream (true: may attend), T = stream_frames() · tokens.
  at::Tensor mask(at::Device device) const;
};

// The clean frames taken together by one attention call (Note [Masked stream attention]): four
// frames keep the calls few while the masked share of each call's pairs stays small.
constexpr int kStreamGroupFrames = 4;

// The stream's attention for post-RoPE q, k, v ([B, H, T, D], T = stream.stream_frames() ·
// stream.tokens_per_frame) -> [B, H, T, D]. Fused SDPA on CUDA (LibTorch >= 2), the reference
// attention elsewhere. Differentiable.
at::Tensor masked_stream_attention(const at::Tensor& q, const at::Tensor& k, const at::Tensor& v,
                                   const MaskedStream& stream,
                                   int group_frames = kStreamGroupFrames);

}  // namespace wc::model
