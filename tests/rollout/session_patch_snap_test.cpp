// Note [Patch snap] turned on and off live in a running Session (the viewer's checkbox): while on
// every patch of a generated block is one of the book's, a live toggle gives the frames of a
// config that chose the same from the start, the choice survives a policy switch and a reset,
// and a config without a book refuses it.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <memory>

#include "engine/core/error.h"
#include "engine/model/palette.h"
#include "engine/rollout/session.h"
#include "tests/model/model_test_util.h"
#include "tests/rollout/session_play.h"

namespace wc::rollout {
namespace {

using ::testing::HasSubstr;

// The tiny model's 16x16 frames in 8x8 patches of a five-colour palette: each solid colour,
// and a checker of the first two bound to the top-left cell.
model::ModelConfig book_config(bool snap) {
  model::ModelConfig c = testing::tiny_config();
  c.palette.colours = {{0, 0, 0}, {255, 255, 255}, {98, 178, 74}, {46, 102, 204}, {230, 72, 204}};
  auto book = std::make_shared<model::PatchBook>();
  book->size = 8;
  book->frame_width = 16;
  book->frame_height = 16;
  book->colours = 5;
  for (uint8_t colour = 0; colour < 5; ++colour) {
    book->patches.push_back(std::vector<uint8_t>(64, colour));
    book->cells.emplace_back();
  }
  std::vector<uint8_t> checker(64);
  for (int i = 0; i < 64; ++i) checker[i] = static_cast<uint8_t>((i / 8 + i % 8) % 2);
  book->patches.push_back(checker);
  book->cells.push_back({0});
  c.patch_snap.book = book;
  c.patch_snap.limits.max_changed = 64;  // random weights: every patch is far from the book
  c.patch_snap.limits.fixed_max_changed = 64;
  c.patch_snap.snap = snap;
  return c;
}

std::unique_ptr<Session> make(const model::ModelConfig& config) {
  return Session::create(config, "", "dense", {{"window", 4}}, 5, at::kCPU);
}

// Cells of the last block that are not a solid colour of the palette (the checker counts only in
// its own cell).
int64_t cells_off_book(const Session& s) {
  const model::ModelConfig& config = s.config();
  const at::Tensor colours = model::palette_tensor(config.palette, at::kCPU);
  const at::Tensor block = s.last_block().reshape({3, 16, 16});
  int64_t off = 0;
  for (int cell = 0; cell < 4; ++cell) {
    const at::Tensor patch = block.slice(1, 8 * (cell / 2), 8 * (cell / 2) + 8)
                                 .slice(2, 8 * (cell % 2), 8 * (cell % 2) + 8)
                                 .reshape({3, 64});
    bool in_book = false;
    for (size_t k = 0; k < config.patch_snap.book->patches.size(); ++k) {
      const std::vector<int>& bound = config.patch_snap.book->cells[k];
      if (!bound.empty() && bound[0] != cell) continue;
      const at::Tensor index = at::tensor(std::vector<int64_t>(
          config.patch_snap.book->patches[k].begin(), config.patch_snap.book->patches[k].end()));
      in_book |= at::equal(colours.index_select(0, index).t(), patch);
    }
    off += in_book ? 0 : 1;
  }
  return off;
}

TEST(SessionPatchSnap, EveryPatchIsTheBooksWhileOn) {
  auto s = make(book_config(/*snap=*/true));
  EXPECT_TRUE(s->has_patch_book());
  EXPECT_TRUE(s->patch_snap());
  for (int i = 0; i < 3; ++i) {
    play(*s, 1);
    EXPECT_EQ(cells_off_book(*s), 0) << "block " << i;
  }
  s->set_patch_snap(false);
  EXPECT_FALSE(s->patch_snap());
  play(*s, 1);
  // Random weights paint nothing like the book: unsnapped, no cell is one of its patches.
  EXPECT_EQ(cells_off_book(*s), 4);
}

TEST(SessionPatchSnap, ALiveToggleGivesTheFramesOfTheConfigsChoiceAndSurvivesASwitch) {
  auto off_live = make(book_config(true));
  off_live->set_patch_snap(false);
  auto off_config = make(book_config(false));
  EXPECT_TRUE(off_config->has_patch_book());
  EXPECT_FALSE(off_config->patch_snap());
  auto on_live = make(book_config(false));
  on_live->set_patch_snap(true);
  auto on_config = make(book_config(true));
  const auto expect_same = [](const std::vector<at::Tensor>& a, const std::vector<at::Tensor>& b) {
    ASSERT_EQ(a.size(), b.size());
    for (size_t i = 0; i < a.size(); ++i) EXPECT_TRUE(at::equal(a[i], b[i])) << "block " << i;
  };
  expect_same(play(*off_live, 3), play(*off_config, 3));
  expect_same(play(*on_live, 3), play(*on_config, 3));

  on_live->switch_policy("headcast", {{"window", 4}});  // a new sampler
  EXPECT_TRUE(on_live->patch_snap());
  play(*on_live, 1);
  EXPECT_EQ(cells_off_book(*on_live), 0);
  on_live->reset(9);
  EXPECT_TRUE(on_live->patch_snap());
  play(*on_live, 1);
  EXPECT_EQ(cells_off_book(*on_live), 0);
}

TEST(SessionPatchSnap, AConfigWithoutABookRefusesTheSnap) {
  model::ModelConfig config = book_config(true);
  config.patch_snap = {};
  auto s = make(config);
  EXPECT_FALSE(s->has_patch_book());
  EXPECT_FALSE(s->patch_snap());
  EXPECT_THAT(testing::error_of([&] { s->set_patch_snap(true); }), HasSubstr("no patch book"));
  EXPECT_FALSE(s->patch_snap());
  s->set_patch_snap(false);  // off is always possible
  play(*s, 1);
  EXPECT_EQ(s->frame_index(), 1u);
}

}  // namespace
}  // namespace wc::rollout
