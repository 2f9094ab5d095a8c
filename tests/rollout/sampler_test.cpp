// The flow-matching schedule and the decode stage against their formulas.
#include <gtest/gtest.h>

#include "engine/rollout/decode.h"
#include "engine/rollout/sampler.h"

namespace wc::rollout {
namespace {

TEST(Sampler, ShiftedScheduleMatchesSelfForcing) {
  const std::vector<double> s = flow_schedule(4, 5.0);
  ASSERT_EQ(s.size(), 4u);
  EXPECT_DOUBLE_EQ(s[0], 1.0);
  EXPECT_NEAR(s[1], 0.9375, 1e-12);
  EXPECT_NEAR(s[2], 0.833333333333, 1e-9);
  EXPECT_NEAR(s[3], 0.625, 1e-12);
  const std::vector<double> uniform = flow_schedule(2, 1.0);
  EXPECT_DOUBLE_EQ(uniform[0], 1.0);
  EXPECT_DOUBLE_EQ(uniform[1], 0.5);
}

TEST(Decode, ClampsAndQuantises) {
  const at::Tensor frames = at::tensor({-2.0f, -1.0f, 0.0f, 1.0f, 0.5f, 3.0f}).view({1, 3, 1, 2});
  const at::Tensor rgba = decode_rgba(frames);
  ASSERT_EQ(rgba.sizes(), at::IntArrayRef({1, 1, 2, 4}));
  const uint8_t* p = rgba.data_ptr<uint8_t>();
  // pixel 0: r = -2 -> 0, g = 0 -> 128 (127.5 rounds half to even), b = 0.5 -> 191
  EXPECT_EQ(p[0], 0);
  EXPECT_EQ(p[1], 128);
  EXPECT_EQ(p[2], 191);
  EXPECT_EQ(p[3], 255);
  // pixel 1: r = -1 -> 0, g = 1 -> 255, b = 3 -> 255
  EXPECT_EQ(p[4], 0);
  EXPECT_EQ(p[5], 255);
  EXPECT_EQ(p[6], 255);
  EXPECT_EQ(p[7], 255);
}

TEST(Decode, EncodeDecodeRoundTripsBytes) {
  std::vector<uint8_t> rgba(4 * 3 * 2);
  for (size_t i = 0; i < rgba.size(); ++i) rgba[i] = static_cast<uint8_t>(i * 37 % 256);
  for (size_t i = 3; i < rgba.size(); i += 4) rgba[i] = 255;
  const at::Tensor decoded = decode_rgba(encode_rgba(rgba.data(), 3, 2).unsqueeze(0));
  EXPECT_EQ(std::vector<uint8_t>(decoded.data_ptr<uint8_t>(),
                                 decoded.data_ptr<uint8_t>() + decoded.numel()),
            rgba);
}

}  // namespace
}  // namespace wc::rollout
