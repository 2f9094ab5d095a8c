// Letterbox arithmetic (pure CPU).
#include <gtest/gtest.h>

#include "ui/frames/letterbox.h"

namespace wc::ui {
namespace {

TEST(Letterbox, IntegerPicksLargestWholeFactorAndCentres) {
  const Rect r = letterbox(64, 48, 200, 150, ScaleMode::kInteger);
  EXPECT_EQ(r.width, 192);
  EXPECT_EQ(r.height, 144);
  EXPECT_EQ(r.x, 4);
  EXPECT_EQ(r.y, 3);
}

TEST(Letterbox, IntegerFallsBackToFitWhenTargetIsSmaller) {
  const Rect r = letterbox(100, 50, 50, 50, ScaleMode::kInteger);
  EXPECT_EQ(r.width, 50);
  EXPECT_EQ(r.height, 25);
  EXPECT_EQ(r.y, 12);
}

TEST(Letterbox, FitKeepsAspectRatio) {
  const Rect r = letterbox(40, 30, 100, 100, ScaleMode::kFit);
  EXPECT_EQ(r.width, 100);
  EXPECT_EQ(r.height, 75);
  EXPECT_EQ(r.x, 0);
  EXPECT_EQ(r.y, 12);
}

TEST(Letterbox, EmptyTargetGivesEmptyRect) {
  const Rect r = letterbox(40, 30, 0, 0, ScaleMode::kInteger);
  EXPECT_EQ(r.width, 0);
  EXPECT_EQ(r.height, 0);
}

TEST(Letterbox, FilterNamesRoundTrip) {
  EXPECT_EQ(parse_filter("nearest"), Filter::kNearest);
  EXPECT_EQ(parse_filter("bilinear"), Filter::kBilinear);
  EXPECT_FALSE(parse_filter("cubic").has_value());
}

}  // namespace
}  // namespace wc::ui
