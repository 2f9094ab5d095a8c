// See own_rollout.h.
#include "engine/train/own_rollout.h"

#include <ATen/core/grad_mode.h>

#include "engine/model/prediction.h"

namespace wc::train {

at::Tensor own_rollout(model::CausalDiTImpl& model, const TeacherForcingBatch& batch,
                       const at::Tensor& rows, const at::Tensor& noise) {
  at::NoGradGuard no_grad;
  const model::ModelConfig& config = model.config();
  const int64_t fpb = config.frames_per_block;
  const int64_t f = batch.noisy_first;  // the clip's frames
  const at::Tensor index = rows.to(batch.history.device());
  const auto pick = [&](const at::Tensor& x) { return x.index_select(0, index); };
  const at::Tensor actions = pick(batch.input.actions).slice(1, 0, f);
  const at::Tensor positions = pick(batch.input.positions).slice(1, 0, f);
  const at::Tensor levels = pick(batch.input.t).slice(1, 0, f);  // the context levels c
  const at::Tensor c = pick(batch.context_level);
  const at::Tensor eps = pick(batch.context_eps);
  at::Tensor history = pick(batch.history).slice(1, 0, fpb).to(at::kFloat);  // the real sink
  for (int64_t start = fpb; start < f; start += fpb) {
    const auto before = [&](const at::Tensor& x) { return x.slice(1, 0, start); };
    const auto block = [&](const at::Tensor& x) { return x.slice(1, start, start + fpb); };
    const at::Tensor context = renoise(history, before(c), before(eps));
    const at::Tensor x1 = noise.slice(1, start - fpb, start).to(at::kFloat);
    const at::Tensor one = at::ones({x1.size(0), fpb}, levels.options());
    model::FrameBatch in;
    in.frames = at::cat({context, x1}, 1);
    in.t = at::cat({before(levels), one}, 1);
    in.actions = at::cat({before(actions), block(actions)}, 1);
    in.positions = at::cat({before(positions), block(positions)}, 1);
    const at::Tensor output = model.forward_train(in).slice(1, start).to(at::kFloat);
    const at::Tensor reference = model::block_reference(history, static_cast<int>(fpb));
    const at::Tensor velocity =
        model::velocity_from_output(config.prediction, output, x1, one, reference);
    history = at::cat({history, x1 - velocity}, 1);  // x0 = x_1 − 1·v
  }
  return history.slice(1, fpb);
}

}  // namespace wc::train
