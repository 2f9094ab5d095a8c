// Checks that the CUDA build of LibTorch reaches the device and computes what the CPU computes.
#include <ATen/ATen.h>
#include <gtest/gtest.h>
#include <torch/cuda.h>

namespace {

TEST(CudaDevice, MatmulMatchesCpu) {
  if (!torch::cuda::is_available()) {
    GTEST_SKIP() << "no CUDA device in this build or on this machine (CPU-only LibTorch)";
  }
  at::manual_seed(7);
  const at::Tensor a = at::randn({64, 96});
  const at::Tensor b = at::randn({96, 32});
  const at::Tensor on_gpu = at::matmul(a.cuda(), b.cuda()).cpu();
  EXPECT_TRUE(at::allclose(on_gpu, at::matmul(a, b), 1e-3, 1e-3));
}

}  // namespace
