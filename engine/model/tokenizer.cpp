// See tokenizer.h.
#include "engine/model/tokenizer.h"

#include <c10/core/GradMode.h>

#include "engine/model/ops.h"

namespace wc::model {
namespace {

// Patches encoded per distance matrix: bounds the [chunk, V] float32 scratch (256 MB at V 16384).
constexpr int64_t kEncodeChunk = 4096;

}  // namespace

Tokenizer::Tokenizer(const Codebook& book, at::Device device) : patch_(book.patch) {
  const int64_t v = book.size();
  const int64_t pixels = int64_t{book.patch} * book.patch;
  at::Tensor table = at::empty({v, 3 * pixels}, at::kFloat);
  float* out = table.data_ptr<float>();
  for (int64_t e = 0; e < v; ++e) {
    const std::vector<uint8_t>& entry = book.entries[static_cast<size_t>(e)];
    for (int c = 0; c < 3; ++c) {
      for (int64_t i = 0; i < pixels; ++i) {
        out[(e * 3 + c) * pixels + i] =
            book.colours[entry[static_cast<size_t>(i)]][static_cast<size_t>(c)];
      }
    }
  }
  entries_ = table.to(device);
  norms_ = (entries_ * entries_).sum(1);
  unit_ = entries_ / 127.5 - 1.0;
}

at::Tensor Tokenizer::encode(const at::Tensor& frames, at::Tensor* misses) const {
  const at::NoGradGuard no_grad;
  TORCH_CHECK(frames.dim() == 5 && frames.size(2) == 3,
              "Tokenizer: frames must be [B, F, 3, H, W]");
  const int64_t b = frames.size(0), f = frames.size(1);
  const int64_t h = frames.size(3) / patch_, w = frames.size(4) / patch_;
  TORCH_CHECK(h * patch_ == frames.size(3) && w * patch_ == frames.size(4),
              "Tokenizer: the frame is not a whole number of ", patch_, "-pixel patches");
  const at::Tensor bytes =
      ((frames.to(entries_.device(), at::kFloat) + 1.0) * 127.5).round().clamp(0.0, 255.0);
  const at::Tensor patches = patchify(bytes, patch_, patch_).reshape({-1, entries_.size(1)});
  std::vector<at::Tensor> tokens, distances;
  for (int64_t start = 0; start < patches.size(0); start += kEncodeChunk) {
    const at::Tensor x = patches.slice(0, start, start + kEncodeChunk);
    // ‖x − e‖² = ‖x‖² − 2·x·e + ‖e‖², exact in float32 for byte values (Note [Patch tokens]).
    const at::Tensor d =
        (x * x).sum(1, /*keepdim=*/true) - 2.0 * at::matmul(x, entries_.t()) + norms_.unsqueeze(0);
    const auto [best, index] = d.min(1);
    tokens.push_back(index);
    distances.push_back(best);
  }
  if (misses != nullptr) *misses = (at::cat(distances) > 0.5).sum();
  return at::cat(tokens).view({b, f, h, w});
}

at::Tensor Tokenizer::decode(const at::Tensor& tokens, at::ScalarType dtype) const {
  const at::NoGradGuard no_grad;
  TORCH_CHECK(tokens.dim() == 4, "Tokenizer: tokens must be [B, F, h, w]");
  const int64_t b = tokens.size(0), f = tokens.size(1), h = tokens.size(2), w = tokens.size(3);
  const at::Tensor patches =
      unit_.index_select(0, tokens.reshape({-1}).to(unit_.device())).to(dtype);
  return unpatchify(patches.view({b, f * h * w, entries_.size(1)}), static_cast<int>(f),
                    static_cast<int>(h), static_cast<int>(w), 3, patch_, patch_);
}

}  // namespace wc::model
