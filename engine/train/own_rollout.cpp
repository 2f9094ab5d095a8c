// See own_rollout.h.
#include "engine/train/own_rollout.h"

#include <ATen/core/grad_mode.h>

#include <algorithm>

#include "engine/model/palette.h"
#include "engine/model/prediction.h"

namespace wc::train {

at::Tensor own_rollout(model::CausalDiTImpl& model, const TeacherForcingBatch& batch,
                       const at::Tensor& rows, const at::Tensor& noise,
                       const at::Tensor& lead_eps) {
  at::NoGradGuard no_grad;
  const model::ModelConfig& config = model.config();
  const int64_t fpb = config.frames_per_block;
  const int64_t f = batch.noisy_first;  // the clip's frames
  const at::Tensor index = rows.to(batch.history.device());
  const auto pick = [&](const at::Tensor& x) { return x.index_select(0, index); };
  const auto sink = [&](const at::Tensor& x) { return x.slice(1, 0, fpb); };
  const auto run = [&](const at::Tensor& x) { return x.slice(1, fpb, f); };
  // Every played frame in order, sink first: the sink, the lead, the run.
  at::Tensor actions = pick(batch.input.actions).slice(1, 0, f);
  at::Tensor positions = pick(batch.input.positions).slice(1, 0, f);
  at::Tensor levels = pick(batch.input.t).slice(1, 0, f);  // the context levels c
  at::Tensor c = pick(batch.context_level);
  at::Tensor eps = pick(batch.context_eps);
  if (batch.lead_actions.defined()) {
    const int64_t lead = batch.lead_actions.size(1);
    TORCH_CHECK(lead_eps.defined() && lead_eps.size(1) == lead, "own_rollout: lead noise missing");
    // One context level per clip (make_teacher_forcing_batch): the lead's is the sink's.
    const auto as_lead = [&](const at::Tensor& x) {
      std::vector<int64_t> size = x.sizes().vec();
      size[1] = lead;
      return x.slice(1, 0, 1).expand(size);
    };
    actions = at::cat({sink(actions), pick(batch.lead_actions), run(actions)}, 1);
    positions = at::cat({sink(positions), pick(batch.lead_positions), run(positions)}, 1);
    levels = at::cat({sink(levels), as_lead(levels), run(levels)}, 1);
    c = at::cat({sink(c), as_lead(c), run(c)}, 1);
    eps = at::cat({sink(eps), lead_eps.to(eps.dtype()), run(eps)}, 1);
  }
  const int64_t played = actions.size(1);
  TORCH_CHECK(noise.size(1) == played - fpb, "own_rollout: one noise frame per played frame");
  // The window of play: the sink block and the newest blocks, as many context blocks as the
  // clip's last block sees (Note [Deep rollout]).
  const int64_t rolling_frames = f - 2 * fpb;
  at::Tensor history = pick(batch.history).slice(1, 0, fpb).to(at::kFloat);  // the real sink
  // Note [Palette snap]: the frames are played as play plays them.
  const at::Tensor colours = config.palette.colours.empty()
                                 ? at::Tensor()
                                 : model::palette_tensor(config.palette, history.device());
  const at::Tensor palette = config.palette.active() ? colours : at::Tensor();
  // Note [Painted pixels]: the paint colours are the palette's, snapped or not.
  model::ChoiceInputs choice;
  if (config.prediction.paint_colours > 0) choice.paint = colours;
  for (int64_t start = fpb; start < played; start += fpb) {
    const int64_t from = std::max(fpb, start - rolling_frames);
    const auto context_of = [&](const at::Tensor& x) {
      return at::cat({x.slice(1, 0, fpb), x.slice(1, from, start)}, 1);
    };
    const auto block = [&](const at::Tensor& x) { return x.slice(1, start, start + fpb); };
    const at::Tensor window = context_of(history);
    const at::Tensor context = renoise(window, context_of(c), context_of(eps));
    const at::Tensor x1 = noise.slice(1, start - fpb, start).to(at::kFloat);
    const at::Tensor one = at::ones({x1.size(0), fpb}, levels.options());
    model::FrameBatch in;
    in.frames = at::cat({context, x1}, 1);
    in.t = at::cat({context_of(levels), one}, 1);
    in.actions = at::cat({context_of(actions), block(actions)}, 1);
    in.positions = at::cat({context_of(positions), block(positions)}, 1);
    const int64_t seen = window.size(1);
    const at::Tensor output = model.forward_train(in).slice(1, seen).to(at::kFloat);
    const at::Tensor reference = model::block_reference(window, static_cast<int>(fpb));
    // Note [Choice draw]: drawn from the block's noise, as play draws.
    if (config.prediction.drawn()) {
      choice.draw = model::choice_draw_for(config.prediction, config.patch_h, config.patch_w, x1);
    }
    const at::Tensor velocity =
        model::velocity_from_output(config.prediction, output, x1, one, reference, choice);
    const at::Tensor x0 = x1 - velocity;  // x_1 − 1·v
    history = at::cat({history, palette.defined() ? model::snap_to_palette(x0, palette) : x0}, 1);
  }
  return history.slice(1, played - (f - fpb));
}

}  // namespace wc::train
