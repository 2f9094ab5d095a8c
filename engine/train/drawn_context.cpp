// See drawn_context.h.
#include "engine/train/drawn_context.h"

#include <c10/core/GradMode.h>

#include <numeric>
#include <vector>

#include "engine/model/masked_stream.h"
#include "engine/rollout/token_sampler.h"
#include "engine/train/token_batch.h"

namespace wc::train {

at::Tensor drawn_context(model::CausalDiTImpl& model, const at::Tensor& tokens,
                         const at::Tensor& actions, const at::Tensor& positions,
                         const at::Tensor& quarters, const at::Tensor& rows,
                         const at::Tensor& carried, double temperature, uint64_t seed) {
  const at::NoGradGuard no_grad;
  TORCH_CHECK(temperature > 0.0, "drawn_context: temperature ", temperature, " is not positive");
  const int64_t f = tokens.size(1), h = tokens.size(2), w = tokens.size(3);
  TORCH_CHECK(f >= 2, "drawn_context: a ", f, "-frame clip has no frame after the sink");
  const at::Device device = tokens.device();
  const at::Tensor index = rows.to(device, at::kBool).nonzero().squeeze(1);
  const int64_t r = index.size(0);
  if (r == 0) return tokens;
  const at::Tensor clip = tokens.index_select(0, index);
  const at::Tensor keys = actions.index_select(0, index);
  const at::Tensor places = positions.index_select(0, index);

  // Every frame after the sink again, wholly masked, each seeing the game's frames before it.
  const int64_t vocab = model.config().tokens.vocab;
  std::vector<int> copies(static_cast<size_t>(f - 1));
  std::iota(copies.begin(), copies.end(), 1);
  model::FrameBatch input;
  input.frames = at::cat({clip, at::full({r, f - 1, h, w}, vocab, clip.options())}, 1);
  const auto float_options = at::TensorOptions().dtype(at::kFloat).device(device);
  input.t = at::cat({at::zeros({r, f}, float_options), at::ones({r, f - 1}, float_options)}, 1);
  input.actions = at::cat({keys, keys.slice(1, 1)}, 1);
  input.positions = at::cat({places, places.slice(1, 1)}, 1);
  input.head_first_frame = static_cast<int>(f);
  if (quarters.defined()) {
    input.quarters = stream_quarters(quarters.index_select(0, index), copies);
  }
  const model::MaskedStream stream{static_cast<int>(f), copies, static_cast<int>(h * w)};
  const at::Tensor logits = model.forward_stream(input, stream);  // [r, F − 1, h·w, V]

  at::Generator gen = at::detail::createCPUGenerator(seed);
  const at::Tensor uniforms =
      at::rand({r, f - 1, h * w}, gen, at::TensorOptions().dtype(at::kFloat)).to(device);
  const at::Tensor drawn =
      rollout::draw_by_cdf(at::softmax(logits.to(at::kFloat) / temperature, -1), uniforms)
          .view({r, f - 1, h, w});

  at::Tensor replaced = clip.clone();
  const at::Tensor keep = carried.index_select(0, index).slice(1, 1).to(at::kBool);
  replaced.slice(1, 1).copy_(at::where(keep, drawn, clip.slice(1, 1)));
  return tokens.index_copy(0, index, replaced);
}

}  // namespace wc::train
