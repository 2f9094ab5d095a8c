// AdamW over a model's parameters: PyTorch's fused CUDA/CPU kernel where LibTorch has it (2.x),
// else the same update with multi-tensor (foreach) ops. adamw_reference_step is the plain
// one-tensor definition the tests hold both paths to.
#pragma once

#include <ATen/ATen.h>

#include <cstdint>
#include <vector>
#include "engine/train/train_specs.h"

namespace wc::train {

class AdamW {
 public:
  // Parameters with two or more dimensions are decayed; vectors (biases, norm weights) are not.
  AdamW(std::vector<at::Tensor> params, AdamWSettings settings, bool allow_fused = true);

  // One update from the parameters' .grad() at learning rate `lr`.
  void step(double lr);

  bool fused() const { return fused_; }
  int64_t steps() const { return steps_; }
  const std::vector<at::Tensor>& params() const { return params_; }
  std::vector<at::Tensor>& exp_avg() { return exp_avg_; }
  std::vector<at::Tensor>& exp_avg_sq() { return exp_avg_sq_; }
  // Restores the step count of a resumed run (the moments are restored through the accessors).
  void set_steps(int64_t steps);

 private:
  struct Group {
    std::vector<at::Tensor> params, grads, exp_avg, exp_avg_sq, state_steps;
    double weight_decay = 0.0;
  };
  Group group(bool decayed) const;
  void fused_step(Group& g, double lr);
  void foreach_step(Group& g, double lr);

  std::vector<at::Tensor> params_, exp_avg_, exp_avg_sq_, state_steps_;
  std::vector<bool> decayed_;
  AdamWSettings settings_;
  bool fused_ = false;
  int64_t steps_ = 0;
};

// The definition: one parameter, in place, for step number `step` (1-based).
void adamw_reference_step(at::Tensor& param, const at::Tensor& grad, at::Tensor& exp_avg,
                          at::Tensor& exp_avg_sq, int64_t step, double lr,
                          const AdamWSettings& settings, bool decayed);

}  // namespace wc::train
