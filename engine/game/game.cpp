// The game's state and rules: movement with tile collisions, crystal collection, animation.
#include "engine/game/game.h"

#include <stdexcept>
#include <string>

#include "engine/game/hash.h"
#include "engine/game/hud.h"
#include "engine/game/render.h"

namespace wc::game {
namespace {

GameConfig checked(GameConfig config) {
  const auto in_range = [](int side) { return side >= kMinFrameSide && side <= kMaxFrameSide; };
  if (!in_range(config.width) || !in_range(config.height)) {
    throw std::invalid_argument(
        "game frame size " + std::to_string(config.width) + "x" + std::to_string(config.height) +
        " is outside " + std::to_string(kMinFrameSide) + ".." + std::to_string(kMaxFrameSide));
  }
  return config;
}

}  // namespace

Game::Game(GameConfig config) : config_(checked(config)), world_(config.seed) {
  frame_.resize(static_cast<size_t>(config_.width) * config_.height * 4);
  reset(config.seed);
}

void Game::reset(uint64_t seed) {
  if (seed != world_.seed()) world_ = World(seed);
  config_.seed = seed;
  frame_index_ = 0;
  player_x_ = world_.spawn().x * kTileSize + kTileSize / 2;
  player_y_ = world_.spawn().y * kTileSize + kTileSize / 2;
  facing_ = Facing::kDown;
  walking_ = false;
  walk_steps_ = 0;
  crystals_collected_ = 0;
  collected_.clear();
  render();
}

void Game::step(Action action) {
  ++frame_index_;
  int dx = 0, dy = 0;
  switch (action) {
    case Action::kNone:
      break;
    case Action::kUp:
      dy = -1;
      facing_ = Facing::kUp;
      break;
    case Action::kDown:
      dy = 1;
      facing_ = Facing::kDown;
      break;
    case Action::kLeft:
      dx = -1;
      facing_ = Facing::kLeft;
      break;
    case Action::kRight:
      dx = 1;
      facing_ = Facing::kRight;
      break;
  }
  walking_ = false;
  if (dx != 0 || dy != 0) {
    const int next_x = player_x_ + dx * kPlayerSpeed;
    const int next_y = player_y_ + dy * kPlayerSpeed;
    if (!hitbox_blocked(next_x, next_y)) {
      player_x_ = next_x;
      player_y_ = next_y;
      walking_ = true;
    }
  }
  walk_steps_ = walking_ ? walk_steps_ + 1 : 0;

  // A crystal is collected when the player's centre stands on its tile.
  const TileCoord here = player_tile();
  if (world_.tile(here.x, here.y) == Tile::kCrystal &&
      collected_.insert(tile_key(here.x, here.y)).second) {
    ++crystals_collected_;
  }
  render();
}

TileCoord Game::player_tile() const {
  return {floor_div(player_x_, kTileSize), floor_div(player_y_, kTileSize)};
}

int Game::walk_frame() const {
  if (!walking_) return 0;
  // Stride A, stand, stride B, stand: a four-pose cycle like classic top-down games.
  static constexpr int kCycle[4] = {1, 0, 2, 0};
  return kCycle[((walk_steps_ - 1) / kWalkFramesPerPose) % 4];
}

PixelRect Game::player_rect() const {
  return {config_.width / 2 - kSpriteSize / 2, config_.height / 2 - kSpriteSize / 2, kSpriteSize,
          kSpriteSize};
}

PixelRect Game::hud_rect() const {
  return config_.show_hud ? hud_layout().box : PixelRect{};
}

Tile Game::tile_at(int32_t x, int32_t y) const {
  const Tile tile = world_.tile(x, y);
  if (tile == Tile::kCrystal && crystal_collected_at({x, y})) return Tile::kGrass;
  return tile;
}

bool Game::crystal_collected_at(TileCoord tile) const {
  return collected_.count(tile_key(tile.x, tile.y)) != 0;
}

uint64_t Game::tile_key(int32_t x, int32_t y) {
  return (static_cast<uint64_t>(static_cast<uint32_t>(x)) << 32) | static_cast<uint32_t>(y);
}

bool Game::hitbox_blocked(int centre_x, int centre_y) const {
  const int x0 = floor_div(centre_x - kPlayerHalfExtent, kTileSize);
  const int x1 = floor_div(centre_x + kPlayerHalfExtent - 1, kTileSize);
  const int y0 = floor_div(centre_y - kPlayerHalfExtent, kTileSize);
  const int y1 = floor_div(centre_y + kPlayerHalfExtent - 1, kTileSize);
  for (int y = y0; y <= y1; ++y) {
    for (int x = x0; x <= x1; ++x) {
      if (blocks_movement(world_.tile(x, y))) return true;
    }
  }
  return false;
}

void Game::render() {
  render_frame(*this, frame_.data());
}

std::vector<PixelRect> screen_overlays(int width, int height) {
  GameConfig config;
  config.width = width;
  config.height = height;
  const Game game(config);
  return {game.player_rect(), game.hud_rect()};
}

}  // namespace wc::game
