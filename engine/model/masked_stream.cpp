// See masked_stream.h.
#include "engine/model/masked_stream.h"

#include <c10/util/Exception.h>

#include <algorithm>

#include "engine/attention/sdpa.h"

namespace wc::model {

namespace {

// A frame-level mask [a, b] spread to its frames' tokens, [a·n, b·n] (by views and one copy: no
// wait for the device, as repeat_interleave may).
at::Tensor by_tokens(const at::Tensor& by_frame, int64_t n) {
  const int64_t a = by_frame.size(0), b = by_frame.size(1);
  return by_frame.view({a, 1, b, 1}).expand({a, n, b, n}).reshape({a * n, b * n});
}

}  // namespace

at::Tensor MaskedStream::mask(at::Device device) const {
  const int total = stream_frames();
  at::Tensor by_frame = at::zeros({total, total}, at::kBool);
  auto m = by_frame.accessor<bool, 2>();
  for (int i = 0; i < frames; ++i) {
    for (int j = 0; j <= i; ++j) m[i][j] = true;
  }
  for (size_t r = 0; r < copies.size(); ++r) {
    const int row = frames + static_cast<int>(r);
    for (int j = 0; j < copies[r]; ++j) m[row][j] = true;
    m[row][row] = true;
  }
  return by_tokens(by_frame.to(device), tokens_per_frame);
}

namespace {

// Frames [first, last) of the stream, each attending to the frames up to itself: the
// block-causal mask of the group's queries against frames [0, last) ([(last − first)·n, last·n]).
at::Tensor group_mask(int first, int last, int n, at::Device device) {
  // Built on the device: a host tensor copied there would wait for the stream at every group.
  const auto options = at::TensorOptions().dtype(at::kLong).device(device);
  const at::Tensor query_frame = at::arange(first, last, options).view({-1, 1});
  const at::Tensor key_frame = at::arange(0, last, options).view({1, -1});
  return by_tokens(key_frame <= query_frame, n);
}

}  // namespace

at::Tensor masked_stream_attention(const at::Tensor& q, const at::Tensor& k, const at::Tensor& v,
                                   const MaskedStream& stream, int group_frames) {
  const int64_t n = stream.tokens_per_frame;
  TORCH_CHECK(q.dim() == 4 && q.size(2) == stream.stream_frames() * n,
              "masked_stream_attention: q has ", q.size(2), " tokens, the stream ",
              stream.stream_frames() * n);
  TORCH_CHECK(group_frames >= 1, "masked_stream_attention: group_frames ", group_frames);
  std::vector<at::Tensor> out;
  out.reserve(stream.frames / group_frames + 1 + stream.copies.size());
  const auto frames_of = [&](const at::Tensor& x, int64_t first, int64_t last) {
    return x.slice(2, first * n, last * n);
  };
  for (int first = 0; first < stream.frames; first += group_frames) {
    const int last = std::min(stream.frames, first + group_frames);
    const at::Tensor qs = frames_of(q, first, last);
    const at::Tensor ks = frames_of(k, 0, last), vs = frames_of(v, 0, last);
    out.push_back(last - first == 1 ? attention::attention(qs, ks, vs)
                                    : attention::masked_attention(
                                          qs, ks, vs, group_mask(first, last, n, q.device())));
  }
  for (size_t r = 0; r < stream.copies.size(); ++r) {
    const int c = stream.copies[r];
    TORCH_CHECK(c >= 0 && c <= stream.frames, "masked_stream_attention: copy of frame ", c,
                " in a stream of ", stream.frames, " clean frames");
    const int row = stream.frames + static_cast<int>(r);
    const at::Tensor qs = frames_of(q, row, row + 1);
    const at::Tensor ks = at::cat({frames_of(k, 0, c), frames_of(k, row, row + 1)}, 2);
    const at::Tensor vs = at::cat({frames_of(v, 0, c), frames_of(v, row, row + 1)}, 2);
    out.push_back(attention::attention(qs, ks, vs));
  }
  return at::cat(out, 2);
}

}  // namespace wc::model
