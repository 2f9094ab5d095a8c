// The bundled token model's codebook as a tokenizer of the game's frames: a frame encoded and
// decoded is what the model could draw at best, so the player sprite and the HUD's digits must
// come through it (Note [Patch tokens]; the world metric's sprite and HUD checks).
#include <gtest/gtest.h>

#include <cstdint>
#include <cstdio>
#include <vector>

#include "engine/eval/overlay_glyphs.h"
#include "engine/eval/player_actions.h"
#include "engine/game/game.h"
#include "engine/model/codebook.h"
#include "engine/model/tokenizer.h"

namespace wc::eval {
namespace {

// RGBA8 -> [1, 1, 3, H, W] in [-1, 1], and back.
at::Tensor to_frame(const std::vector<uint8_t>& rgba, int side) {
  const at::Tensor bytes =
      at::from_blob(const_cast<uint8_t*>(rgba.data()), {side, side, 4}, at::kByte);
  return (bytes.slice(2, 0, 3).permute({2, 0, 1}).to(at::kFloat) / 127.5 - 1.0)
      .unsqueeze(0)
      .unsqueeze(0);
}

std::vector<uint8_t> to_rgba(const at::Tensor& frame) {
  const at::Tensor rgb =
      ((frame[0][0] + 1.0) * 127.5).round().clamp(0, 255).to(at::kByte).permute({1, 2, 0});
  const at::Tensor rgba =
      at::cat({rgb, at::full({rgb.size(0), rgb.size(1), 1}, 255, at::kByte)}, 2).contiguous();
  return std::vector<uint8_t>(rgba.data_ptr<uint8_t>(), rgba.data_ptr<uint8_t>() + rgba.numel());
}

TEST(ShippedCodebook, CarriesTheSpriteAndTheHudThroughEncodeAndDecode) {
  const model::Codebook book =
      model::read_codebook(WORLDCAST_SOURCE_DIR "/assets/models/game-tokens/codebook.txt");
  const model::Tokenizer tokenizer(book, at::kCPU);
  constexpr int kSide = 128;
  int64_t frames = 0, sprites = 0, huds = 0, sprite_frames_before = 0;
  for (uint64_t seed = 1000000; seed < 1000004; ++seed) {
    game::GameConfig config;
    config.width = kSide;
    config.height = kSide;
    config.seed = seed;
    game::Game game(config);
    for (game::Action action : player_actions(seed, 200)) {
      game.step(action);
      const std::vector<uint8_t> decoded =
          to_rgba(tokenizer.decode(tokenizer.encode(to_frame(game.frame(), kSide)), at::kFloat));
      ++frames;
      sprite_frames_before +=
          match_player_sprite(game.frame().data(), kSide, kSide, game.player_rect()).pose;
      sprites += match_player_sprite(decoded.data(), kSide, kSide, game.player_rect()).pose;
      huds += hud_digits_readable(decoded.data(), kSide, kSide);
    }
  }
  ASSERT_EQ(sprite_frames_before, frames);  // the game's own frames: the check reads them
  std::printf("encoded and decoded: sprite %lld of %lld frames, HUD %lld\n",
              static_cast<long long>(sprites), static_cast<long long>(frames),
              static_cast<long long>(huds));
  EXPECT_GE(static_cast<double>(sprites) / frames, 0.99);
  EXPECT_EQ(huds, frames);
}

}  // namespace
}  // namespace wc::eval
