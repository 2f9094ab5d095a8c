// See token_batch.h.
#include "engine/train/token_batch.h"

#include <c10/core/GradMode.h>

#include <algorithm>
#include <cmath>
#include <numeric>
#include <random>

namespace wc::train {

// Set apart from the batch's seed, so overlay corruption leaves the batch's other draws as they
// were.
constexpr uint64_t kOverlayCorruptSeed = 0x6f7665726c6179ULL;

namespace {

// `context` ([B, F·n] tokens) with each place of `hit` ([B, F·n] bool, on the CPU) holding
// instead a token drawn from `gen` among all of its clip's places.
at::Tensor from_elsewhere_in_clip(const at::Tensor& context, const at::Tensor& hit,
                                  at::Generator& gen) {
  const at::Tensor source =
      at::randint(0, context.size(1), context.sizes(), gen, at::TensorOptions().dtype(at::kLong));
  const at::Device device = context.device();
  return at::where(hit.to(device), context.gather(1, source.to(device)), context);
}

// Note [Tile tokens]: `context` ([B, F·n]) with each place of `hit` holding instead a token of its
// own kind drawn from `gen`: a ground place a tile from any frame's ground, an overlay place its
// own place in any frame.
at::Tensor from_own_kind(const at::Tensor& context, const at::Tensor& hit, int64_t frames,
                         const TilePlaces& tiles, at::Generator& gen) {
  const int64_t b = context.size(0), n = context.size(1) / frames;
  const auto longs = at::TensorOptions().dtype(at::kLong);
  const at::Tensor ground_places = tiles.ground.reshape({n}).to(at::kCPU).nonzero().view({-1});
  const at::Tensor frame = at::randint(0, frames, {b, frames * n}, gen, longs);
  const at::Tensor pick = at::randint(0, ground_places.size(0), {b, frames * n}, gen, longs);
  const at::Tensor own_place = at::arange(n, longs).repeat({frames}).view({1, frames * n});
  const at::Tensor is_ground = tiles.ground.reshape({1, n}).to(at::kCPU).repeat({1, frames});
  const at::Tensor place = at::where(
      is_ground, ground_places.index_select(0, pick.view({-1})).view({b, frames * n}), own_place);
  const at::Tensor source = frame * n + place;
  const at::Device device = context.device();
  return at::where(hit.to(device), context.gather(1, source.to(device)), context);
}

}  // namespace

at::Tensor tile_strip(const at::Tensor& origins, int64_t rows, int64_t cols, int64_t grid_h) {
  const int64_t b = origins.size(0), f = origins.size(1);
  at::Tensor strip = at::zeros({b, f, grid_h, cols}, origins.options().dtype(at::kBool));
  if (f < 2) return strip;
  const at::Tensor step = origins.slice(1, 1) - origins.slice(1, 0, f - 1);  // [B, F − 1, 2]
  const at::Tensor dx = step.select(2, 0).view({b, f - 1, 1, 1});
  const at::Tensor dy = step.select(2, 1).view({b, f - 1, 1, 1});
  const auto opts = strip.options();
  at::Tensor col = at::arange(cols, origins.options()).view({1, 1, 1, cols});
  at::Tensor row = at::arange(grid_h, origins.options()).view({1, 1, grid_h, 1});
  const at::Tensor ground = (row < rows);
  // A step moves the window a tile at most; a larger move (the walk a clip skips) brings in no
  // strip.
  const at::Tensor in = ((dx == 1) & (col == cols - 1)) | ((dx == -1) & (col == 0)) |
                        ((dy == 1) & (row == rows - 1)) | ((dy == -1) & (row == 0));
  strip.slice(1, 1).copy_((in & ground).to(opts.dtype()));
  return strip;
}

at::Tensor scrolled_in(const at::Tensor& tokens) {
  const at::NoGradGuard no_grad;
  const int64_t b = tokens.size(0), f = tokens.size(1), h = tokens.size(2), w = tokens.size(3);
  at::Tensor strip = at::zeros({b, f, h, w}, tokens.options().dtype(at::kBool));
  if (f < 2) return strip;
  const at::Tensor best = step_shifts(tokens);  // [B, F − 1]
  for (int i = 1; i < 5; ++i) {
    const int dy = kStepShifts[i][0], dx = kStepShifts[i][1];
    at::Tensor edge = at::zeros({h, w}, strip.options());
    if (dy > 0) edge.select(0, h - 1).fill_(true);
    if (dy < 0) edge.select(0, 0).fill_(true);
    if (dx > 0) edge.select(1, w - 1).fill_(true);
    if (dx < 0) edge.select(1, 0).fill_(true);
    strip.slice(1, 1).logical_or_((best == i).view({b, f - 1, 1, 1}) & edge);
  }
  return strip;
}

TokenBatch make_token_batch(const at::Tensor& tokens, const at::Tensor& actions,
                            const at::Tensor& positions, const TokenSpec& spec, int64_t vocab,
                            double action_dropout, int64_t dropped_action, uint64_t seed,
                            const at::Tensor& overlay_cells, const OwnContext* own,
                            const TilePlaces* tiles) {
  const at::NoGradGuard no_grad;
  const at::Device device = tokens.device();
  const int64_t b = tokens.size(0), f = tokens.size(1), h = tokens.size(2), w = tokens.size(3);
  const int64_t n = h * w;
  const int m = spec.noisy_frames;
  TORCH_CHECK(m >= 1 && m < f, "make_token_batch: ", m, " masked frames of a ", f, "-frame clip");
  at::Generator gen = at::detail::createCPUGenerator(seed);
  const auto cpu_float = at::TensorOptions().dtype(at::kFloat);

  TokenBatch batch;
  // Which frames are masked: `m` distinct frames after the sink, from the generator.
  {
    const at::Tensor order = at::randperm(f - 1, gen, at::TensorOptions().dtype(at::kLong));
    for (int i = 0; i < m; ++i)
      batch.noisy.push_back(static_cast<int>(order[i].item<int64_t>()) + 1);
    std::sort(batch.noisy.begin(), batch.noisy.end());
  }
  const at::Tensor noisy_index =
      at::tensor(std::vector<int64_t>(batch.noisy.begin(), batch.noisy.end()),
                 at::TensorOptions().dtype(at::kLong))
          .to(device);

  // Action dropout, the same for a frame's context and masked copies.
  const at::Tensor dropped = at::rand({b, f}, gen, cpu_float).to(device) < action_dropout;
  const at::Tensor keyed =
      at::where(dropped, at::full({}, dropped_action, actions.options()), actions);

  // Context corruption (never the sink frame, never a played clip's).
  at::Tensor context = (own != nullptr ? own->context : tokens).reshape({b, f * n});
  {
    at::Tensor corrupt_clip = at::rand({b, 1}, gen, cpu_float) < spec.corrupt_share;
    if (own != nullptr) corrupt_clip = corrupt_clip & ~own->rows.to(at::kCPU).view({b, 1});
    const at::Tensor level = at::rand({b, 1}, gen, cpu_float) * spec.max_corrupt;
    at::Tensor hit = (at::rand({b, f * n}, gen, cpu_float) < level) & corrupt_clip;
    hit.slice(1, 0, n).fill_(false);
    context = tiles != nullptr ? from_own_kind(context, hit, f, *tiles, gen)
                               : from_elsewhere_in_clip(context, hit, gen);
  }
  // Note [Overlay corruption]: from its own generator, so a spec without it draws as before.
  if (spec.overlay_corrupt_share > 0.0 && overlay_cells.defined()) {
    at::Generator overlay_gen = at::detail::createCPUGenerator(seed ^ kOverlayCorruptSeed);
    at::Tensor chosen = at::rand({b, 1, 1}, overlay_gen, cpu_float) < spec.overlay_corrupt_share;
    if (own != nullptr) chosen = chosen & ~own->played.to(at::kCPU).view({b, 1, 1});
    const at::Tensor first =
        at::randint(1, f, {b, 1, 1}, overlay_gen, at::TensorOptions().dtype(at::kLong));
    const at::Tensor frames = at::arange(f, at::TensorOptions().dtype(at::kLong)).view({1, f, 1});
    const at::Tensor cells = overlay_cells.to(at::kCPU, at::kBool).reshape({1, 1, n});
    const at::Tensor hit = (chosen & (frames >= first) & cells).reshape({b, f * n});
    context = tiles != nullptr ? from_own_kind(context, hit, f, *tiles, overlay_gen)
                               : from_elsewhere_in_clip(context, hit, overlay_gen);
  }

  // The masked copies: a share r = cos(π/2·u) of each frame's tokens, at least one.
  const at::Tensor truth =
      (own != nullptr ? own->targets : tokens).index_select(1, noisy_index).reshape({b, m, n});
  const at::Tensor share = at::cos(M_PI / 2.0 * at::rand({b, m, 1}, gen, cpu_float));
  const at::Tensor count = at::clamp_min(at::ceil(share * n), 1.0);  // [B, M, 1]
  const at::Tensor scores = at::rand({b, m, n}, gen, cpu_float);
  const at::Tensor rank = scores.argsort(-1, false).argsort(-1, false).to(at::kFloat);
  const at::Tensor masked_cpu = rank < count;
  const at::Tensor masked = masked_cpu.to(device);
  const at::Tensor shown = at::where(masked, at::full({}, vocab, truth.options()), truth);

  batch.input.frames = at::cat({context.view({b, f, h, w}), shown.view({b, m, h, w})}, 1);
  const at::Tensor level = (count / static_cast<double>(n)).squeeze(-1).to(device);  // [B, M]
  batch.input.t = at::cat({at::zeros({b, f}, level.options()), level}, 1);
  batch.input.actions = at::cat({keyed, keyed.index_select(1, noisy_index)}, 1);
  batch.input.positions = at::cat({positions, positions.index_select(1, noisy_index)}, 1);
  batch.input.head_first_frame = static_cast<int>(f);
  batch.stream = model::MaskedStream{static_cast<int>(f), batch.noisy, static_cast<int>(n)};
  batch.targets = truth;
  const at::Tensor strip = (tiles != nullptr ? tiles->strip : scrolled_in(tokens))
                               .index_select(1, noisy_index)
                               .reshape({b, m, n});
  batch.weights =
      masked.to(at::kFloat) * (1.0 + (spec.new_ground_weight - 1.0) * strip.to(at::kFloat));
  if (own != nullptr) {
    batch.weights =
        batch.weights * own->scored.index_select(1, noisy_index).reshape({b, m, n}).to(at::kFloat);
  }
  if (tiles != nullptr) {
    batch.weights = batch.weights * tiles->scored.to(device, at::kFloat).reshape({1, 1, n});
  }
  if (overlay_cells.defined() && spec.overlay_weight != 1.0) {
    const at::Tensor overlay = overlay_cells.to(device, at::kFloat).reshape({1, 1, n});
    batch.weights = batch.weights * (1.0 + (spec.overlay_weight - 1.0) * overlay);
  }
  batch.new_ground = strip.logical_and(batch.weights > 0);
  if (overlay_cells.defined()) {
    batch.new_ground.logical_and_(overlay_cells.to(device).reshape({1, 1, n}).logical_not());
  }
  return batch;
}

at::Tensor stream_quarters(const at::Tensor& quarters, const std::vector<int>& noisy,
                           const at::Tensor& known) {
  const int64_t m = static_cast<int64_t>(noisy.size());
  const at::Tensor unknown = at::full({quarters.size(0), m}, -1, quarters.options());
  if (!known.defined()) return at::cat({quarters, unknown}, 1);
  TORCH_CHECK(known.sizes() == at::IntArrayRef({quarters.size(0), m}),
              "stream_quarters: known must be [", quarters.size(0), ", ", m, "], got ",
              known.sizes());
  std::vector<int64_t> index(noisy.begin(), noisy.end());
  const at::Tensor own = quarters.index_select(
      1, at::tensor(index, at::TensorOptions().dtype(at::kLong)).to(quarters.device()));
  return at::cat({quarters, at::where(known.to(quarters.device()), own, unknown)}, 1);
}

at::Tensor masked_token_loss(const at::Tensor& logits, const at::Tensor& targets,
                             const at::Tensor& weights, const at::Tensor& allowed) {
  const int64_t v = logits.size(-1);
  at::Tensor scores = logits.to(at::kFloat);
  if (allowed.defined()) scores = scores.masked_fill(allowed.logical_not(), -1e9);
  const at::Tensor nll = at::cross_entropy_loss(scores.reshape({-1, v}), targets.reshape({-1}), {},
                                                at::Reduction::None);
  const at::Tensor w = weights.reshape({-1});
  return (nll * w).sum() / w.sum().clamp_min(1e-6);
}

}  // namespace wc::train
