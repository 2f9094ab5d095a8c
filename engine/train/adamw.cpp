// See adamw.h.
#include "engine/train/adamw.h"

#include <ATen/core/grad_mode.h>
#include <c10/core/GradMode.h>
#include <torch/version.h>

#include <cmath>

namespace wc::train {

AdamW::AdamW(std::vector<at::Tensor> params, AdamWSettings settings, bool allow_fused)
    : params_(std::move(params)), settings_(settings) {
#if TORCH_VERSION_MAJOR >= 2
  fused_ = allow_fused;
#else
  (void)allow_fused;
#endif
  for (const at::Tensor& p : params_) {
    exp_avg_.push_back(at::zeros_like(p, at::MemoryFormat::Contiguous));
    exp_avg_sq_.push_back(at::zeros_like(p, at::MemoryFormat::Contiguous));
    state_steps_.push_back(at::zeros({}, p.options().dtype(at::kFloat)));
    decayed_.push_back(p.dim() >= 2);
  }
}

void AdamW::set_steps(int64_t steps) {
  steps_ = steps;
  for (at::Tensor& s : state_steps_) s.fill_(static_cast<double>(steps));
}

AdamW::Group AdamW::group(bool decayed) const {
  Group g;
  g.weight_decay = decayed ? settings_.weight_decay : 0.0;
  for (size_t i = 0; i < params_.size(); ++i) {
    if (decayed_[i] != decayed || !params_[i].grad().defined()) continue;
    g.params.push_back(params_[i]);
    g.grads.push_back(params_[i].grad());
    g.exp_avg.push_back(exp_avg_[i]);
    g.exp_avg_sq.push_back(exp_avg_sq_[i]);
    g.state_steps.push_back(state_steps_[i]);
  }
  return g;
}

void AdamW::step(double lr) {
  at::NoGradGuard no_grad;
  ++steps_;
  for (bool decayed : {true, false}) {
    Group g = group(decayed);
    if (g.params.empty()) continue;
    at::_foreach_add_(g.state_steps, 1);
    if (fused_) {
      fused_step(g, lr);
    } else {
      foreach_step(g, lr);
    }
  }
}

void AdamW::fused_step(Group& g, double lr) {
#if TORCH_VERSION_MAJOR >= 2
  at::_fused_adamw_(g.params, g.grads, g.exp_avg, g.exp_avg_sq, /*max_exp_avg_sqs=*/{},
                    g.state_steps, lr, settings_.beta1, settings_.beta2, g.weight_decay,
                    settings_.eps, /*amsgrad=*/false, /*maximize=*/false,
                    /*grad_scale=*/c10::nullopt, /*found_inf=*/c10::nullopt);
#else
  (void)g;
  (void)lr;
#endif
}

void AdamW::foreach_step(Group& g, double lr) {
  const double bias1 = 1.0 - std::pow(settings_.beta1, static_cast<double>(steps_));
  const double bias2 = 1.0 - std::pow(settings_.beta2, static_cast<double>(steps_));
  if (g.weight_decay != 0.0) at::_foreach_mul_(g.params, 1.0 - lr * g.weight_decay);
  at::_foreach_mul_(g.exp_avg, settings_.beta1);
  at::_foreach_add_(g.exp_avg, g.grads, 1.0 - settings_.beta1);
  at::_foreach_mul_(g.exp_avg_sq, settings_.beta2);
  at::_foreach_addcmul_(g.exp_avg_sq, g.grads, g.grads, 1.0 - settings_.beta2);
  std::vector<at::Tensor> denom = at::_foreach_sqrt(g.exp_avg_sq);
  at::_foreach_div_(denom, std::sqrt(bias2));
  at::_foreach_add_(denom, settings_.eps);
  at::_foreach_addcdiv_(g.params, g.exp_avg, denom, -lr / bias1);
}

void adamw_reference_step(at::Tensor& param, const at::Tensor& grad, at::Tensor& exp_avg,
                          at::Tensor& exp_avg_sq, int64_t step, double lr,
                          const AdamWSettings& settings, bool decayed) {
  at::NoGradGuard no_grad;
  if (decayed) param.mul_(1.0 - lr * settings.weight_decay);
  exp_avg.mul_(settings.beta1).add_(grad, 1.0 - settings.beta1);
  exp_avg_sq.mul_(settings.beta2).addcmul_(grad, grad, 1.0 - settings.beta2);
  const double bias1 = 1.0 - std::pow(settings.beta1, static_cast<double>(step));
  const double bias2 = 1.0 - std::pow(settings.beta2, static_cast<double>(step));
  const at::Tensor denom = exp_avg_sq.sqrt() / std::sqrt(bias2) + settings.eps;
  param.addcdiv_(exp_avg, denom, -lr / bias1);
}

}  // namespace wc::train
