// Motion weights against a per-pixel loop from their definition, and the weighted loss.
#include "engine/train/motion_weight.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>

#include "engine/train/clip_stream.h"

namespace wc::train {
namespace {

TEST(MotionWeight, MarksChangedPixelsOfFramesWithATruePredecessor) {
  at::manual_seed(static_cast<uint64_t>(std::random_device{}()));
  const int64_t b = 2, f = 4, c = 3, h = 6, w = 5;
  ClipBatch clips;
  clips.frames = at::rand({b, f, c, h, w}) * 2 - 1;
  // Some pixels barely move, so both sides of the threshold occur.
  clips.frames.slice(1, 2, 3).slice(3, 0, 3).copy_(clips.frames.slice(1, 1, 2).slice(3, 0, 3) +
                                                   0.01);
  clips.positions = at::tensor({0, 1, 2, 3, 0, 700, 701, 702}, at::kLong).view({b, f});
  LossSpec loss;
  loss.motion_weight = 3.0;
  loss.motion_threshold = 0.3;
  const at::Tensor weights =
      motion_weights(clips.frames, clips.positions, /*frames_per_block=*/1, loss);
  ASSERT_EQ(weights.sizes(), at::IntArrayRef({b, f - 1, 1, h, w}));

  const auto x = clips.frames.accessor<float, 5>();
  const auto p = clips.positions.accessor<int64_t, 2>();
  const auto got = weights.accessor<float, 5>();
  int moved = 0, still = 0;
  for (int64_t i = 0; i < b; ++i) {
    for (int64_t t = 1; t < f; ++t) {
      for (int64_t y = 0; y < h; ++y) {
        for (int64_t xx = 0; xx < w; ++xx) {
          float change = 0.0f;
          for (int64_t ch = 0; ch < c; ++ch) {
            change = std::max(change, std::abs(x[i][t][ch][y][xx] - x[i][t - 1][ch][y][xx]));
          }
          const bool weighted = change > 0.3f && p[i][t] == p[i][t - 1] + 1;
          (weighted ? moved : still) += 1;
          EXPECT_EQ(got[i][t - 1][0][y][xx], weighted ? 4.0f : 1.0f)
              << "clip " << i << " frame " << t << " pixel " << y << "," << xx;
        }
      }
    }
  }
  EXPECT_GT(moved, 0);
  EXPECT_GT(still, 0);
  // The second clip's first noisy frame follows the sink across a walk: never weighted.
  EXPECT_TRUE(at::all(weights[1][0] == 1.0f).item<bool>());
}

TEST(MotionWeight, WeightedErrorIsAWeightedMeanOverPixels) {
  at::manual_seed(static_cast<uint64_t>(std::random_device{}()));
  const at::Tensor prediction = at::randn({2, 3, 3, 4, 4});
  const at::Tensor target = at::randn({2, 3, 3, 4, 4});
  const at::Tensor plain = (prediction - target).pow(2).mean();
  EXPECT_TRUE(at::allclose(weighted_squared_error(prediction, target, at::Tensor()), plain));
  EXPECT_TRUE(at::allclose(
      weighted_squared_error(prediction, target, at::ones({2, 3, 1, 4, 4}) * 5.0), plain));
  // All weight on one pixel: that pixel's squared error averaged over channels.
  at::Tensor weight = at::zeros({2, 3, 1, 4, 4});
  weight[1][2][0][3][1] = 7.0;
  const at::Tensor pixel =
      (prediction[1][2].select(1, 3).select(1, 1) - target[1][2].select(1, 3).select(1, 1))
          .pow(2)
          .mean();
  EXPECT_TRUE(at::allclose(weighted_squared_error(prediction, target, weight), pixel));
}

}  // namespace
}  // namespace wc::train
