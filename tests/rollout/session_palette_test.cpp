// Note [Palette snap] turned on and off live in a running Session (the viewer's checkbox): a
// live toggle gives the frames of a config that chose the same from the start, the choice
// survives a policy switch and a reset, and a config without a palette refuses it.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "engine/core/error.h"
#include "engine/model/palette.h"
#include "engine/rollout/session.h"
#include "tests/model/model_test_util.h"
#include "tests/rollout/session_play.h"

namespace wc::rollout {
namespace {

using ::testing::HasSubstr;

model::ModelConfig palette_config(bool snap) {
  model::ModelConfig c = testing::tiny_config();
  c.palette.colours = {{0, 0, 0}, {255, 255, 255}, {98, 178, 74}, {46, 102, 204}, {230, 72, 204}};
  c.palette.snap = snap;
  return c;
}

std::unique_ptr<Session> make(const model::ModelConfig& config) {
  return Session::create(config, "", "dense", {{"window", 4}}, 5, at::kCPU);
}

// Pixels of the last block that are none of the config's palette colours.
int64_t off_palette_pixels(const Session& s) {
  const at::Tensor colours = model::palette_tensor(s.config().palette, at::kCPU);  // [K, 3]
  const at::Tensor pixels = s.last_block().movedim(1, -1).reshape({-1, 1, 3});
  const at::Tensor on_palette = (pixels == colours.unsqueeze(0)).all(-1).any(-1);
  return on_palette.logical_not().sum().item<int64_t>();
}

void expect_same_blocks(const std::vector<at::Tensor>& a, const std::vector<at::Tensor>& b) {
  ASSERT_EQ(a.size(), b.size());
  for (size_t i = 0; i < a.size(); ++i) EXPECT_TRUE(at::equal(a[i], b[i])) << "block " << i;
}

TEST(SessionPaletteSnap, SnapsWhileOnAndShowsTheRawFramesWhileOff) {
  auto s = make(palette_config(/*snap=*/true));
  EXPECT_TRUE(s->has_palette());
  EXPECT_TRUE(s->palette_snap());
  play(*s, 2);
  EXPECT_EQ(off_palette_pixels(*s), 0);
  s->set_palette_snap(false);
  EXPECT_FALSE(s->palette_snap());
  play(*s, 1);
  // Random weights draw nothing like the palette: unsnapped, hardly a pixel is one of its colours.
  EXPECT_GT(off_palette_pixels(*s), 16 * 16 / 2);
  s->set_palette_snap(true);
  play(*s, 1);
  EXPECT_EQ(off_palette_pixels(*s), 0);
}

TEST(SessionPaletteSnap, ALiveToggleGivesTheFramesOfTheConfigsChoice) {
  // Before the first generated block (the seed block is a real frame, never snapped): from then
  // on the toggled Session is the one whose config chose that from the start.
  auto off_live = make(palette_config(true));
  off_live->set_palette_snap(false);
  auto off_config = make(palette_config(false));
  EXPECT_FALSE(off_config->palette_snap());
  EXPECT_TRUE(off_config->has_palette());
  expect_same_blocks(play(*off_live, 3), play(*off_config, 3));

  auto on_live = make(palette_config(false));
  on_live->set_palette_snap(true);
  auto on_config = make(palette_config(true));
  expect_same_blocks(play(*on_live, 3), play(*on_config, 3));
}

TEST(SessionPaletteSnap, TheChoiceSurvivesAPolicySwitchAndAReset) {
  auto s = make(palette_config(true));
  s->set_palette_snap(false);
  play(*s, 2);
  s->switch_policy("headcast", {{"window", 4}});  // a new sampler
  EXPECT_FALSE(s->palette_snap());
  play(*s, 1);
  EXPECT_GT(off_palette_pixels(*s), 0);
  s->reset(9);
  EXPECT_FALSE(s->palette_snap());
  play(*s, 1);
  EXPECT_GT(off_palette_pixels(*s), 0);

  s->set_palette_snap(true);
  s->switch_policy("dense", {{"window", 4}});
  EXPECT_TRUE(s->palette_snap());
  play(*s, 1);
  EXPECT_EQ(off_palette_pixels(*s), 0);
}

TEST(SessionPaletteSnap, AConfigWithoutAPaletteRefusesTheSnap) {
  auto s = make(testing::tiny_config());
  EXPECT_FALSE(s->has_palette());
  EXPECT_FALSE(s->palette_snap());
  EXPECT_THROW(s->set_palette_snap(true), Error);
  EXPECT_THAT(testing::error_of([&] { s->set_palette_snap(true); }), HasSubstr("no palette"));
  EXPECT_FALSE(s->palette_snap());
  s->set_palette_snap(false);  // off is always possible
  play(*s, 1);
  EXPECT_EQ(s->frame_index(), 1u);
}

}  // namespace
}  // namespace wc::rollout
