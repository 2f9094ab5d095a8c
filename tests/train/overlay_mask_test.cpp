// The overlay mask covers the player sprite and the HUD and nothing of the world beside them.
#include <gtest/gtest.h>

#include "engine/game/game.h"
#include "engine/train/overlay_mask.h"

namespace wc::train {
namespace {

TEST(OverlayMask, OverlaysAreThePlayerAndTheHud) {
  const at::Tensor mask = overlay_mask(128, 128);
  game::GameConfig config;
  const game::Game game(config);
  for (const game::PixelRect& r : {game.player_rect(), game.hud_rect()}) {
    ASSERT_GT(r.width * r.height, 0);
    EXPECT_TRUE(mask.slice(0, r.y, r.y + r.height).slice(1, r.x, r.x + r.width).all().item<bool>());
  }
  EXPECT_FALSE(mask[127][127].item<bool>());
}

}  // namespace
}  // namespace wc::train
