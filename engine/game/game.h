// The reference game: a deterministic top-down explorer over an endless seeded world. It is the
// source of training data and the ground truth for evaluation: same seed + actions => same frames.
#pragma once

#include <cstdint>
#include <unordered_set>
#include <vector>

#include "engine/game/action.h"
#include "engine/game/sprites.h"
#include "engine/game/world.h"

namespace wc::game {

// Note [One patch per step]: a step moves the player (and so the camera) 8 pixels, the world
// model's patch side, so a scroll is a shift of whole tokens that attention can copy, not a
// sub-patch resampling. At 2 pixels per step the model learned to copy the last frame: its
// best-matching shift was 0 px under every key. One frame of the game stands for four 60 Hz
// ticks of 2 pixels: `./wc play` paces frames at 15 per second, so the world scrolls 120 pixels
// a second, and the walk cycle shows a new pose every frame. Waves
// keep drifting a pixel every 4 frames (render.h): at a pixel a frame they are a coherent motion
// that phase correlation (the responsiveness estimator) reads as a scroll.
// Moves are all or nothing (a step that would touch a blocker is not taken), which keeps every
// position on the 8-pixel grid.
inline constexpr int kPlayerSpeed = 8;        // world pixels per frame while walking
inline constexpr int kPlayerHalfExtent = 6;   // the hitbox is 12x12 pixels around the centre
inline constexpr int kWalkFramesPerPose = 1;  // frames each stride pose is held
inline constexpr int kMinFrameSide = 16;
inline constexpr int kMaxFrameSide = 8192;

struct GameConfig {
  int width = 128;
  int height = 128;
  uint64_t seed = 0;
  bool show_hud = true;
};

// A rectangle on screen, in frame pixels.
struct PixelRect {
  int x = 0;
  int y = 0;
  int width = 0;
  int height = 0;
  bool contains(int px, int py) const {
    return px >= x && px < x + width && py >= y && py < y + height;
  }
};

class Game {
 public:
  // Throws std::invalid_argument unless width and height are in [kMinFrameSide, kMaxFrameSide].
  explicit Game(GameConfig config = {});

  // Starts over in the world of `seed`: the player at the spawn, nothing collected, frame 0.
  void reset(uint64_t seed);
  // Advances one frame: turn and walk (if not blocked), collect, animate, render.
  void step(Action action);

  // RGBA8 (alpha 255), row-major, width() * height() * 4 bytes, rendered after every step/reset.
  const std::vector<uint8_t>& frame() const { return frame_; }
  int width() const { return config_.width; }
  int height() const { return config_.height; }
  uint64_t seed() const { return world_.seed(); }
  // Frames stepped since the last reset.
  uint64_t frame_index() const { return frame_index_; }
  int crystals_collected() const { return crystals_collected_; }

  // The player's centre in world pixels (tile t spans pixels [16t, 16t + 16)).
  int player_x() const { return player_x_; }
  int player_y() const { return player_y_; }
  TileCoord player_tile() const;
  Facing facing() const { return facing_; }
  // Whether the last step moved the player.
  bool walking() const { return walking_; }
  // 0 standing, 1 and 2 the stride poses.
  int walk_frame() const;

  // The world pixel drawn at frame pixel (0, 0); the camera keeps the player centred.
  int camera_x() const { return player_x_ - config_.width / 2; }
  int camera_y() const { return player_y_ - config_.height / 2; }
  // Where the player sprite and the HUD are drawn (the HUD rect is empty when hidden).
  PixelRect player_rect() const;
  PixelRect hud_rect() const;

  const World& world() const { return world_; }
  // The tile as it is now: a collected crystal has become grass.
  Tile tile_at(int32_t x, int32_t y) const;
  bool crystal_collected_at(TileCoord tile) const;

 private:
  static uint64_t tile_key(int32_t x, int32_t y);
  bool hitbox_blocked(int centre_x, int centre_y) const;
  void render();

  GameConfig config_;
  World world_;
  std::vector<uint8_t> frame_;
  uint64_t frame_index_ = 0;
  int player_x_ = 0;
  int player_y_ = 0;
  Facing facing_ = Facing::kDown;
  bool walking_ = false;
  uint64_t walk_steps_ = 0;  // consecutive frames walked, drives the stride animation
  int crystals_collected_ = 0;
  // Collected crystals stay gone for good, however far the player wanders and comes back.
  std::unordered_set<uint64_t> collected_;
};

// Screen-fixed overlays the game draws over the scrolling world at this frame size (the HUD
// shown): the player sprite (centred; it turns and animates) and the HUD box. Metrics leave them
// out of "did the view scroll?", and training weighs and corrupts them apart (overlay_mask.h in
// engine/train).
std::vector<PixelRect> screen_overlays(int width, int height);

}  // namespace wc::game
