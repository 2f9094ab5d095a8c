// Block-boundary flicker on constructed sequences with known frame-to-frame differences.
#include <gtest/gtest.h>

#include <vector>

#include "engine/core/error.h"
#include "engine/eval/flicker.h"

namespace wc::eval {
namespace {

at::Tensor flat(int value) {
  at::Tensor frame = at::full({8, 8, 4}, value, at::kByte);
  frame.select(2, 3).fill_(255);
  return frame;
}

// Frames whose value steps by `inside` within a block and by `boundary` across blocks of F.
std::vector<at::Tensor> stepping(int count, int frames_per_block, int inside, int boundary) {
  std::vector<at::Tensor> frames;
  int value = 10;
  for (int t = 0; t < count; ++t) {
    if (t > 0) value += t % frames_per_block == 0 ? boundary : inside;
    frames.push_back(flat(value));
  }
  return frames;
}

TEST(Flicker, BoundaryOverInsideForMultiFrameBlocks) {
  FrameDifferences d;
  d.add_sequence(stepping(12, 4, 2, 6), 4);
  EXPECT_EQ(d.boundary_pairs, 2);  // t = 4, 8
  EXPECT_EQ(d.inside_pairs, 9);
  EXPECT_DOUBLE_EQ(*d.boundary_mean(), 6.0);
  EXPECT_DOUBLE_EQ(*d.inside_mean(), 2.0);
  EXPECT_DOUBLE_EQ(*block_flicker(d), 3.0);
}

TEST(Flicker, SmoothSequenceHasRatioOne) {
  FrameDifferences d;
  d.add_sequence(stepping(9, 3, 5, 5), 3);
  EXPECT_DOUBLE_EQ(*block_flicker(d), 1.0);
}

TEST(Flicker, FirstIndexShiftsTheBoundaries) {
  // Frames 2..7 of blocks of 4: boundary only at t = 4.
  FrameDifferences d;
  std::vector<at::Tensor> frames;
  for (int v : {0, 1, 11, 12, 13, 14}) frames.push_back(flat(v));  // t = 2, 3, 4, 5, 6, 7
  d.add_sequence(frames, 4, 2);
  EXPECT_EQ(d.boundary_pairs, 1);
  EXPECT_DOUBLE_EQ(*d.boundary_mean(), 10.0);
  EXPECT_DOUBLE_EQ(*d.inside_mean(), 1.0);
}

TEST(Flicker, OneFramePerBlockComparesWithTheReference) {
  FrameDifferences policy, dense;
  policy.add_sequence(stepping(10, 1, 0, 4), 1);
  dense.add_sequence(stepping(10, 1, 0, 2), 1);
  EXPECT_EQ(policy.inside_pairs, 0);
  EXPECT_FALSE(block_flicker(policy).has_value());
  EXPECT_DOUBLE_EQ(*flicker_vs_reference(policy, dense), 2.0);
  EXPECT_DOUBLE_EQ(*flicker_vs_reference(dense, dense), 1.0);
}

TEST(Flicker, AccumulatesOverSequences) {
  FrameDifferences a, b;
  a.add_sequence(stepping(3, 1, 0, 2), 1);  // two pairs of 2
  b.add_sequence(stepping(2, 1, 0, 8), 1);  // one pair of 8
  a.add(b);
  EXPECT_EQ(a.boundary_pairs, 3);
  EXPECT_DOUBLE_EQ(*a.boundary_mean(), 4.0);
}

TEST(Flicker, StaticReferenceHasNoRatio) {
  FrameDifferences policy, still;
  policy.add_sequence(stepping(4, 1, 0, 3), 1);
  still.add_sequence(stepping(4, 1, 0, 0), 1);
  EXPECT_FALSE(flicker_vs_reference(policy, still).has_value());
  EXPECT_THROW(policy.add_sequence(stepping(3, 1, 0, 1), 0), Error);
}

}  // namespace
}  // namespace wc::eval
