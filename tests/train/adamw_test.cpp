// The optimiser's fast path (fused kernel on LibTorch 2.x, foreach ops on 1.13) against the
// one-tensor definition, on fresh random tensors.
#include <gtest/gtest.h>

#include "engine/train/adamw.h"

namespace wc::train {
namespace {

TEST(AdamW, MatchesTheReferenceOverSeveralSteps) {
  for (bool allow_fused : {true, false}) {
    at::manual_seed(static_cast<uint64_t>(allow_fused) + 1);
    std::vector<at::Tensor> params = {at::randn({7, 5}), at::randn({5}), at::randn({3, 2, 4})};
    std::vector<at::Tensor> reference, exp_avg, exp_avg_sq;
    for (auto& p : params) {
      reference.push_back(p.clone());
      exp_avg.push_back(at::zeros_like(p));
      exp_avg_sq.push_back(at::zeros_like(p));
      p.set_requires_grad(true);
    }
    AdamWSettings settings;
    settings.weight_decay = 0.1;
    AdamW optimizer(params, settings, allow_fused);
    for (int step = 1; step <= 6; ++step) {
      const double lr = 1e-2 * step;
      for (size_t i = 0; i < params.size(); ++i) {
        const at::Tensor grad = at::randn_like(params[i]);
        params[i].mutable_grad() = grad.clone();
        adamw_reference_step(reference[i], grad, exp_avg[i], exp_avg_sq[i], step, lr, settings,
                             params[i].dim() >= 2);
      }
      optimizer.step(lr);
      for (size_t i = 0; i < params.size(); ++i) {
        EXPECT_TRUE(at::allclose(params[i].detach(), reference[i], 1e-5, 1e-6))
            << "fused " << optimizer.fused() << " step " << step << " tensor " << i;
        EXPECT_TRUE(at::allclose(optimizer.exp_avg_sq()[i], exp_avg_sq[i], 1e-5, 1e-7));
      }
    }
    EXPECT_EQ(optimizer.steps(), 6);
  }
}

TEST(AdamW, VectorsAreNotDecayed) {
  at::Tensor bias = at::ones({4});
  bias.set_requires_grad(true);
  AdamWSettings settings;
  settings.weight_decay = 0.5;
  AdamW optimizer({bias}, settings);
  bias.mutable_grad() = at::zeros({4});
  optimizer.step(0.1);
  EXPECT_TRUE(bias.detach().equal(at::ones({4})));
}

}  // namespace
}  // namespace wc::train
