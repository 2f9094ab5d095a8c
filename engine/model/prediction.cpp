// See prediction.h.
#include "engine/model/prediction.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include "engine/core/error.h"

namespace wc::model {
namespace {

// `padded` (its last two dims an h x w frame padded by s on each side) read at p + o_j for each
// move j, Note [Moved reference]'s offsets o_j of s pixels: five [..., h, w] views.
std::vector<at::Tensor> moved_views(const at::Tensor& padded, int64_t s, int64_t h, int64_t w) {
  const int64_t offsets[PredictionConfig::kMoves][2] = {{0, 0}, {-s, 0}, {s, 0}, {0, -s}, {0, s}};
  std::vector<at::Tensor> views;
  for (const auto& o : offsets) {
    views.push_back(padded.slice(-2, s + o[0], s + o[0] + h).slice(-1, s + o[1], s + o[1] + w));
  }
  return views;
}

}  // namespace

at::Tensor move_choices(const at::Tensor& previous, int move_pixels) {
  const int64_t b = previous.size(0), f = previous.size(1), ch = previous.size(2),
                h = previous.size(3), w = previous.size(4);
  const int64_t m = move_pixels;
  // Choice j shows at pixel p the previous frame's pixel p + o_j, the border repeated.
  const at::Tensor padded =
      at::replication_pad2d(previous.to(at::kFloat).reshape({b * f, ch, h, w}), {m, m, m, m});
  return at::stack(moved_views(padded, m, h, w), 1)
      .view({b, f, PredictionConfig::kMoves, ch, h, w});
}

at::Tensor shaped_logits(const at::Tensor& logits, double temperature, double floor) {
  const at::Tensor shaped = logits.to(at::kFloat) / temperature;
  if (floor <= 0.0) return shaped;
  // p_j < floor · p_max  ⇔  l_j < l_max + ln(floor): the likeliest choice always stays.
  const at::Tensor cut = std::get<0>(shaped.max(2, /*keepdim=*/true)) + std::log(floor);
  return shaped.masked_fill(shaped < cut, -std::numeric_limits<float>::infinity());
}

at::Tensor choice_draw(const at::Tensor& noise, int cell_h, int cell_w) {
  if (noise.size(2) < 2) throw Error("prediction", "a choice draw needs two noise channels");
  const int64_t b = noise.size(0), f = noise.size(1), h = noise.size(3), w = noise.size(4);
  if (h % cell_h != 0 || w % cell_w != 0) {
    throw Error("prediction", "a choice draw's cells must tile the frame");
  }
  // The noise at each cell's first pixel, repeated over the cell.
  const at::Tensor first = noise.slice(2, 0, 2)
                               .to(at::kFloat)
                               .view({b, f, 2, h / cell_h, cell_h, w / cell_w, cell_w})
                               .slice(4, 0, 1)
                               .slice(6, 0, 1)
                               .expand({b, f, 2, h / cell_h, cell_h, w / cell_w, cell_w})
                               .reshape({b, f, 2, h, w});
  return 0.5 * (1.0 + at::erf(first * M_SQRT1_2));
}

at::Tensor choice_draw_for(const PredictionConfig& prediction, int patch_h, int patch_w,
                           const at::Tensor& noise) {
  return prediction.draw_per_patch ? choice_draw(noise, patch_h, patch_w) : choice_draw(noise);
}

namespace {

// Among paints of probabilities `paint` ([B, F, K, H, W], not necessarily summing to 1): the
// first whose cumulative probability reaches `reach` ([B, F, H, W]), as a choice index. A reach
// of the paints' total lands on the last paint left in, never on one a floor left out (Note
// [Choice temperature]).
at::Tensor drawn_paint(const at::Tensor& paint, const at::Tensor& reach) {
  const at::Tensor below = paint.cumsum(2) < reach.unsqueeze(2);
  return PredictionConfig::kMoves + below.sum(2).clamp_max(paint.size(2) - 1);
}

// `x` ([B, F, ..., H, W]) read at p + steps·o_j for each move j (Note [Moved reference]'s
// offsets o_j of m pixels): [B, F, 5, ..., H, W], `fill` where that lies past the border.
at::Tensor read_moved(const at::Tensor& x, int64_t steps, int64_t m, double fill) {
  const int64_t s = steps * m;
  return at::stack(
      moved_views(at::constant_pad_nd(x, {s, s, s, s}, fill), s, x.size(-2), x.size(-1)), 2);
}

// Note [Uncovered ground]: the pixels that move and whose source is past the border or a still
// pixel that, moved the same way, would have shown another colour.
at::Tensor uncovered_pixels(const at::Tensor& likeliest, const at::Tensor& previous, int64_t m) {
  // [B, F, 1, H, W] each pixel's move k; the source q = p + o_k's own move, and the colours at q
  // and at q + o_k (NaN past the border, so that they never compare equal).
  const at::Tensor source_move = read_moved(likeliest.squeeze(2), 1, m, -1).gather(2, likeliest);
  const at::Tensor k = likeliest.unsqueeze(3).expand({-1, -1, -1, previous.size(2), -1, -1});
  const at::Tensor prev = previous.to(at::kFloat);
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const at::Tensor at_source = read_moved(prev, 1, m, nan).gather(2, k).squeeze(2);
  const at::Tensor beyond = read_moved(prev, 2, m, nan).gather(2, k).squeeze(2);
  const at::Tensor would_change =
      (at_source - beyond).abs().gt(1e-3).logical_or(at::isnan(at_source - beyond));
  const at::Tensor outside = source_move.lt(0).squeeze(2);
  const at::Tensor still = source_move.eq(0).squeeze(2) & would_change.any(2);
  return likeliest.squeeze(2).gt(0) & (outside | still);
}

// Which pixels each move takes from past the border (Note [Moved reference]'s offsets), as
// [5, h, w] float32 of 0 and 1: the top rows for the move from above, and so on; "as it is" none.
at::Tensor outside_sources(int64_t h, int64_t w, int64_t m, const at::TensorOptions& options) {
  const at::Tensor outside = at::zeros({PredictionConfig::kMoves, h, w}, options.dtype(at::kFloat));
  outside.select(0, 1).slice(0, 0, std::min(m, h)).fill_(1.0);
  outside.select(0, 2).slice(0, std::max<int64_t>(h - m, 0)).fill_(1.0);
  outside.select(0, 3).slice(1, 0, std::min(m, w)).fill_(1.0);
  outside.select(0, 4).slice(1, std::max<int64_t>(w - m, 0)).fill_(1.0);
  return outside;
}

// Whether each pixel's move (`move` [B, F, 1, H, W], indices of the five) reads past the border.
at::Tensor reads_outside(const at::Tensor& move, int64_t m) {
  const int64_t b = move.size(0), f = move.size(1), h = move.size(3), w = move.size(4);
  return outside_sources(h, w, m, move.options())
      .view({1, 1, PredictionConfig::kMoves, h, w})
      .expand({b, f, PredictionConfig::kMoves, h, w})
      .gather(2, move)
      .squeeze(2)
      .gt(0.5);
}

}  // namespace

at::Tensor new_ground_pixels(const at::Tensor& move_logits, int move_pixels,
                             const at::Tensor& previous, const at::Tensor& known) {
  constexpr int64_t moves = PredictionConfig::kMoves;
  const at::Tensor likeliest = move_logits.slice(2, 0, moves).argmax(2, /*keepdim=*/true);
  if (known.defined()) {
    if (previous.defined()) {
      throw Error("prediction",
                  "uncovered ground and remembered ground do not combine (Note [Remembered "
                  "ground])");
    }
    // Note [Remembered ground]: sources inside the frame are always known.
    return known.gather(2, likeliest).squeeze(2).logical_not();
  }
  if (previous.defined()) return uncovered_pixels(likeliest, previous, move_pixels);
  return reads_outside(likeliest, move_pixels);
}

bool is_remembered_reference(const at::Tensor& reference, const at::Tensor& x_t, int move_pixels) {
  const int64_t h = x_t.size(-2), w = x_t.size(-1), ring = 2 * int64_t{move_pixels};
  if (reference.size(-2) == h && reference.size(-1) == w) return false;
  if (move_pixels > 0 && reference.size(-2) == h + ring && reference.size(-1) == w + ring) {
    return true;
  }
  throw Error("prediction", "the reference is " + std::to_string(reference.size(-2)) + "x" +
                                std::to_string(reference.size(-1)) + " for frames of " +
                                std::to_string(h) + "x" + std::to_string(w) +
                                ": it must be their size, or remembered, " + std::to_string(ring) +
                                " larger (Note [Remembered ground])");
}

at::Tensor remembered_middle(const at::Tensor& reference, int move_pixels) {
  const int64_t m = move_pixels;
  return reference.slice(-2, m, reference.size(-2) - m).slice(-1, m, reference.size(-1) - m);
}

namespace {

// A remembered reference as [B·F, C, H + 2m, W + 2m] float32, each ring pixel nothing is
// remembered at replaced by the middle's nearest border pixel (what move_choices repeats).
at::Tensor filled_ring(const at::Tensor& reference, int64_t m) {
  const at::Tensor ring = reference.to(at::kFloat).flatten(0, 1);
  const at::Tensor repeated = at::replication_pad2d(
      remembered_middle(ring, static_cast<int>(m)).contiguous(), {m, m, m, m});
  return at::where(at::isnan(ring).any(1, /*keepdim=*/true), repeated, ring);
}

}  // namespace

at::Tensor remembered_move_choices(const at::Tensor& reference, int move_pixels) {
  const int64_t m = move_pixels, b = reference.size(0), f = reference.size(1),
                ch = reference.size(2), h = reference.size(3) - 2 * m,
                w = reference.size(4) - 2 * m;
  return at::stack(moved_views(filled_ring(reference, m), m, h, w), 1)
      .view({b, f, PredictionConfig::kMoves, ch, h, w});
}

at::Tensor known_sources(const at::Tensor& reference, int move_pixels) {
  const int64_t m = move_pixels, b = reference.size(0), f = reference.size(1),
                h = reference.size(3) - 2 * m, w = reference.size(4) - 2 * m;
  const at::Tensor known =
      at::isnan(reference).any(2, /*keepdim=*/true).logical_not().to(at::kFloat).flatten(0, 1);
  return at::stack(moved_views(known, m, h, w), 1)
      .view({b, f, PredictionConfig::kMoves, h, w})
      .gt(0.5);
}

at::Tensor choice_index(const at::Tensor& logits, MoveChoice how, const at::Tensor& draw,
                        int move_pixels, const at::Tensor& uncovered_in,
                        const at::Tensor& known_in) {
  constexpr int64_t moves = PredictionConfig::kMoves;
  if (how != MoveChoice::kSample && how != MoveChoice::kNewGround) return logits.argmax(2);
  // The moves are never drawn (Note [Painted pixels]). When a floor left every move out, all
  // their logits are −inf and the argmax is the first, "as it is"; the paints' total is then 1.
  const at::Tensor likeliest_move = logits.slice(2, 0, moves).argmax(2);
  if (logits.size(2) == moves) return likeliest_move;  // nothing to paint: the sharpest move
  if (!draw.defined()) {
    throw Error("prediction", "a drawn choice needs each pixel's draw (Note [Choice draw])");
  }
  if (how == MoveChoice::kNewGround) {
    // Note [New ground]: painted where the likeliest move reaches past the border, the colour
    // drawn among the paints alone.
    if (move_pixels <= 0) throw Error("prediction", "new ground needs the moves' step");
    const at::Tensor paint = at::softmax(logits.slice(2, moves).to(at::kFloat), 2);
    return at::where(new_ground_pixels(logits, move_pixels, uncovered_in, known_in),
                     drawn_paint(paint, draw.select(2, 1)), likeliest_move);
  }
  const at::Tensor p = at::softmax(logits.to(at::kFloat), 2);
  const at::Tensor paint = p.slice(2, moves);
  const at::Tensor paint_total = paint.sum(2);
  // Among the paints, the draw scaled to the paints' total.
  const at::Tensor painted = drawn_paint(paint, draw.select(2, 1) * paint_total);
  return at::where(draw.select(2, 0) < paint_total, painted, likeliest_move);
}

namespace {

constexpr int64_t kMoves = PredictionConfig::kMoves;

// The checked paint colours for `logits`: as many as the logits have choices past the moves.
at::Tensor paint_of(const at::Tensor& logits, const ChoiceInputs& choice) {
  const int64_t painted = logits.size(2) - kMoves;
  const int64_t given = choice.paint.defined() ? choice.paint.size(0) : 0;
  if (painted != given) {
    throw Error("prediction", "the output has " + std::to_string(painted) + " paint choices but " +
                                  std::to_string(given) +
                                  " paint colours were given (Note [Painted pixels])");
  }
  return choice.paint.defined() ? choice.paint.to(at::kFloat) : at::Tensor();
}

// Each pixel's choice by `index` ([B, F, H, W]) among the moved frames `moves` ([B, F, 5, C, H,
// W]) and the colours `paint` ([K, C] or undefined).
at::Tensor pick(const at::Tensor& moves, const at::Tensor& paint, const at::Tensor& index) {
  const at::Tensor move_index = index.clamp_max(kMoves - 1)
                                    .unsqueeze(2)
                                    .unsqueeze(3)
                                    .expand({-1, -1, 1, moves.size(3), -1, -1});
  const at::Tensor moved = moves.gather(2, move_index).squeeze(2);
  if (!paint.defined()) return moved;
  // [B, F, H, W, C] → [B, F, C, H, W]: each pixel's colour, used where a paint was chosen.
  const at::Tensor painted =
      at::embedding(paint, (index - kMoves).clamp_min(0)).permute({0, 1, 4, 2, 3});
  return at::where((index >= kMoves).unsqueeze(2), painted, moved);
}

// The softmax mix of `moves` and `paint` by `logits`, float32.
at::Tensor mix_of(const at::Tensor& moves, const at::Tensor& paint, const at::Tensor& logits) {
  const at::Tensor weights = at::softmax(logits.to(at::kFloat), 2);
  at::Tensor mix = (weights.slice(2, 0, kMoves).unsqueeze(3) * moves).sum(2);
  if (paint.defined()) mix = mix + at::einsum("bfkhw,kc->bfchw", {weights.slice(2, kMoves), paint});
  return mix;
}

}  // namespace

at::Tensor moved_reference(const at::Tensor& previous, const at::Tensor& logits, int move_pixels,
                           MoveChoice how, const ChoiceInputs& choice, bool uncovered_ground) {
  const at::Tensor moves = move_choices(previous, move_pixels);
  const at::Tensor paint = paint_of(logits, choice);
  if (how == MoveChoice::kMix) return mix_of(moves, paint, logits);
  return pick(moves, paint,
              choice_index(logits, how, choice.draw, move_pixels,
                           uncovered_ground ? previous : at::Tensor()));
}

at::Tensor straight_through_reference(const at::Tensor& previous, const at::Tensor& logits,
                                      int move_pixels, const ChoiceInputs& choice) {
  const at::Tensor moves = move_choices(previous, move_pixels);
  const at::Tensor paint = paint_of(logits, choice);
  const at::Tensor mix = mix_of(moves, paint, logits);
  return pick(moves, paint, logits.argmax(2)) + (mix - mix.detach());
}

at::Tensor with_stay_bias(const at::Tensor& logits, double stay_bias) {
  if (stay_bias == 0.0) return logits.to(at::kFloat);
  at::Tensor biased = logits.to(at::kFloat, /*non_blocking=*/false, /*copy=*/true);
  biased.select(2, 0).add_(stay_bias);
  return biased;
}

at::Tensor velocity_from_output(const PredictionConfig& prediction, const at::Tensor& output,
                                const at::Tensor& x_t, const at::Tensor& t,
                                const at::Tensor& reference, const ChoiceInputs& choice) {
  if (!prediction.previous_frame_skip) return output;
  if (!reference.defined()) {
    throw Error("prediction", "the previous-frame skip needs the frame before the block");
  }
  const double s = prediction.spread;
  // t = 0 is a clean frame: its velocity is the limit, reached to float32 precision at 1e-3.
  const at::Tensor level = t.to(at::kFloat).clamp(1e-3, 1.0).view({t.size(0), t.size(1), 1, 1, 1});
  const at::Tensor a = 1.0 - level;
  const at::Tensor d = a * a * (s * s) + level * level;
  const at::Tensor k = a * (s * s) / d;
  const at::Tensor c = s * level / d.sqrt();
  const at::Tensor x = x_t.to(at::kFloat);
  const int64_t channels = x_t.size(2);
  const at::Tensor correction = output.slice(2, 0, channels).to(at::kFloat);
  const int m = prediction.move_pixels;
  // Note [Remembered ground]
  const bool remembered = m > 0 && is_remembered_reference(reference, x_t, m);
  if (remembered && prediction.move_choice != MoveChoice::kNewGround) {
    throw Error("prediction",
                "remembered ground needs move_choice \"new_ground\" (Note [Remembered ground])");
  }
  const at::Tensor previous = remembered ? remembered_middle(reference, m) : reference;
  at::Tensor r = previous.to(at::kFloat);
  at::Tensor corrected = correction;
  if (prediction.move_choice == MoveChoice::kNewGround) {
    // Note [New ground]: the paints are shaped among themselves, and a painted pixel is its colour.
    const at::Tensor raw = output.slice(2, channels);
    const at::Tensor logits =
        at::cat({with_stay_bias(raw.slice(2, 0, PredictionConfig::kMoves), prediction.stay_bias),
                 shaped_logits(raw.slice(2, PredictionConfig::kMoves),
                               prediction.choice_temperature, prediction.choice_floor)},
                2);
    const at::Tensor index = choice_index(logits, MoveChoice::kNewGround, choice.draw, m,
                                          prediction.uncovered_ground ? previous : at::Tensor(),
                                          remembered ? known_sources(reference, m) : at::Tensor());
    r = pick(remembered ? remembered_move_choices(reference, m) : move_choices(previous, m),
             paint_of(logits, choice), index);
    at::Tensor drawn_here = index < PredictionConfig::kMoves;
    if (remembered) {
      // Note [Remembered ground]: a pixel read from the ring is what it shows, like a paint.
      drawn_here &= reads_outside(index.clamp_max(PredictionConfig::kMoves - 1).unsqueeze(2), m)
                        .logical_not();
    }
    corrected = correction * drawn_here.unsqueeze(2);
  } else if (prediction.move_pixels > 0) {
    const at::Tensor logits =
        prediction.move_choice == MoveChoice::kSample
            ? shaped_logits(output.slice(2, channels), prediction.choice_temperature,
                            prediction.choice_floor)
        : prediction.move_choice == MoveChoice::kSharpest
            ? with_stay_bias(output.slice(2, channels), prediction.stay_bias)
            : output.slice(2, channels);
    r = moved_reference(previous, logits, m, prediction.move_choice, choice);
  }
  const at::Tensor x0 = r + k * (x - a * r) + c * corrected;
  return ((x - x0) / level).to(output.scalar_type());
}

at::Tensor block_reference(const at::Tensor& before, int frames_per_block) {
  const int64_t last = before.size(1) - 1;
  return before.slice(1, last).expand({-1, frames_per_block, -1, -1, -1}).contiguous();
}

at::Tensor previous_frame_reference(const at::Tensor& frames, int frames_per_block) {
  const int64_t f = frames.size(1);
  std::vector<int64_t> index;
  for (int64_t i = frames_per_block; i < f; ++i)
    index.push_back(i / frames_per_block * frames_per_block - 1);
  return frames.index_select(1, at::tensor(index, at::kLong).to(frames.device()));
}

}  // namespace wc::model
