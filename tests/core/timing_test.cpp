#include "engine/core/timing.h"

#include <gtest/gtest.h>

namespace wc {
namespace {

TEST(Percentile, InterpolatesBetweenOrderStatistics) {
  EXPECT_DOUBLE_EQ(percentile({4, 1, 3, 2}, 50), 2.5);
  EXPECT_DOUBLE_EQ(percentile({4, 1, 3, 2}, 0), 1.0);
  EXPECT_DOUBLE_EQ(percentile({4, 1, 3, 2}, 100), 4.0);
  EXPECT_DOUBLE_EQ(percentile({10, 20}, 99), 19.9);
}

TEST(Percentile, EmptyAndSingle) {
  EXPECT_DOUBLE_EQ(percentile({}, 50), 0.0);
  EXPECT_DOUBLE_EQ(median({7}), 7.0);
}

TEST(Stopwatch, IsMonotonic) {
  Stopwatch watch;
  const double first = watch.elapsed_ms();
  const double second = watch.elapsed_ms();
  EXPECT_GE(first, 0.0);
  EXPECT_GE(second, first);
}

}  // namespace
}  // namespace wc
