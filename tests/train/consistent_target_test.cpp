// Note [Consistent target]: the own clips' targets are their own frames moved as the game's
// camera moved, and the game's frames wherever no move explains a pixel; checked against a
// pixel-by-pixel reference on a scrolling random world.
#include <gtest/gtest.h>

#include <array>

#include "engine/train/clip_stream.h"
#include "engine/train/consistent_target.h"

namespace wc::train {
namespace {

constexpr int kSide = 16, kMove = 4, kFrames = 5, kClips = 3;
// The move of choice j of Note [Moved reference]: pixel p shows the previous frame's p + o_j.
constexpr std::array<std::array<int, 2>, 5> kOffsets = {
    {{0, 0}, {-kMove, 0}, {kMove, 0}, {0, -kMove}, {0, kMove}}};

struct Scroll {
  at::Tensor truth;                     // [B, F, 3, H, W]
  at::Tensor overlay;                   // [H, W] bool
  std::vector<std::vector<int>> moves;  // [B][F]: the choice between frames f − 1 and f
};

// Frames cut from a random world by a camera that moves one step (or none) a frame, with
// screen-fixed overlays repainted at random every frame, as the sprite and the HUD are.
Scroll scrolling_clips(uint64_t seed) {
  at::manual_seed(seed);
  const int margin = kMove * kFrames;
  const at::Tensor world = at::rand({3, kSide + 2 * margin, kSide + 2 * margin}) * 2 - 1;
  Scroll s;
  s.overlay = at::zeros({kSide, kSide}, at::kBool);
  s.overlay.slice(0, 6, 10).slice(1, 6, 10).fill_(true);  // a centred sprite
  s.overlay.slice(0, 0, 2).slice(1, 0, 5).fill_(true);    // a HUD in the corner
  s.truth = at::empty({kClips, kFrames, 3, kSide, kSide});
  const at::Tensor moves = at::randint(0, 5, {kClips, kFrames}, at::kLong);
  for (int b = 0; b < kClips; ++b) {
    int y = margin, x = margin;
    s.moves.emplace_back();
    for (int f = 0; f < kFrames; ++f) {
      const int j = f == 0 ? 0 : static_cast<int>(moves[b][f].item<int64_t>());
      y += kOffsets[static_cast<size_t>(j)][0];
      x += kOffsets[static_cast<size_t>(j)][1];
      s.moves.back().push_back(j);
      s.truth[b][f] = world.slice(1, y, y + kSide).slice(2, x, x + kSide);
      s.truth[b][f].masked_scatter_(s.overlay.expand({3, kSide, kSide}),
                                    at::rand({3 * s.overlay.sum().item<int64_t>()}) * 2 - 1);
    }
  }
  return s;
}

// The target of Note [Consistent target], pixel by pixel; with `uncovered`, Note [Uncovered
// pixels]: a pixel whose source was under an overlay at any earlier adjacent frame keeps the
// game's.
at::Tensor reference_frames(const Scroll& s, const at::Tensor& history, const at::Tensor& positions,
                            const at::Tensor& own, bool uncovered = false) {
  at::Tensor out = s.truth.slice(1, 1).clone();
  const auto overlay = s.overlay.accessor<bool, 2>();
  for (int b = 0; b < kClips; ++b) {
    if (!own[b].item<bool>()) continue;
    std::vector<std::vector<bool>> swept(kSide, std::vector<bool>(kSide));
    for (int y = 0; y < kSide; ++y) {
      for (int x = 0; x < kSide; ++x) swept[y][x] = overlay[y][x];
    }
    for (int f = 1; f < kFrames; ++f) {
      std::vector<std::vector<bool>> next(kSide, std::vector<bool>(kSide));
      const bool adjacent =
          positions[b][f].item<int64_t>() == positions[b][f - 1].item<int64_t>() + 1;
      const auto& o = kOffsets[static_cast<size_t>(s.moves[static_cast<size_t>(b)][f])];
      for (int y = 0; y < kSide; ++y) {
        for (int x = 0; x < kSide; ++x) {
          const int sy = y + o[0], sx = x + o[1];
          const bool inside = sy >= 0 && sy < kSide && sx >= 0 && sx < kSide;
          next[y][x] = overlay[y][x] || (adjacent && inside && swept[sy][sx]);
          if (!adjacent || !inside) continue;  // not the frame before, or scrolled in
          if (overlay[y][x] || overlay[sy][sx]) continue;
          if (uncovered && swept[sy][sx]) continue;
          out[b][f - 1].select(1, y).select(1, x).copy_(
              history[b][f - 1].select(1, sy).select(1, sx));
        }
      }
      swept = next;
    }
  }
  return out;
}

TEST(ConsistentTarget, TrueHistoryGivesTheGamesFrames) {
  for (uint64_t seed : {1u, 2u}) {
    const Scroll s = scrolling_clips(seed);
    const at::Tensor positions = at::arange(kFrames, at::kLong).repeat({kClips, 1});
    const at::Tensor frames = consistent_frames(s.truth, s.truth, positions,
                                                at::ones({kClips}, at::kBool), s.overlay, kMove);
    EXPECT_TRUE(frames.equal(s.truth.slice(1, 1))) << "seed " << seed;
  }
}

TEST(ConsistentTarget, OwnHistoryIsMovedAsTheGameMoved) {
  for (uint64_t seed : {3u, 4u, 5u}) {
    const Scroll s = scrolling_clips(seed);
    at::Tensor history = s.truth.clone();
    history.slice(1, 1) += at::randn_like(history.slice(1, 1)) * 0.3;  // its own errors
    at::Tensor positions = at::arange(kFrames, at::kLong).repeat({kClips, 1});
    positions[0].slice(0, 1) += 40;  // clip 0: a run placed away from its sink
    const at::Tensor own = at::tensor({1, 1, 0}, at::kLong).to(at::kBool);
    const at::Tensor frames = consistent_frames(s.truth, history, positions, own, s.overlay, kMove);
    const at::Tensor expected = reference_frames(s, history, positions, own);
    EXPECT_TRUE(at::allclose(frames, expected))
        << "seed " << seed << ": max difference " << (frames - expected).abs().max().item<float>();
    EXPECT_FALSE(frames[1].equal(s.truth[1].slice(0, 1))) << "the own clip took its own frames";
    EXPECT_TRUE(frames[2].equal(s.truth[2].slice(0, 1))) << "a clip of true history";
    EXPECT_TRUE(frames[0][0].equal(s.truth[0][1])) << "after a sink that is not the frame before";
  }
}

// Note [Uncovered pixels] against the pixel loop, and on a trail: a copy of the sprite that the
// model's own frame left just outside the overlay, where the sprite just was, is kept and moved by
// the consistent target but replaced by the game's frame with uncovered pixels followed.
TEST(ConsistentTarget, UncoveredPixelsReachForTheGame) {
  for (uint64_t seed : {6u, 7u, 8u}) {
    const Scroll s = scrolling_clips(seed);
    at::Tensor history = s.truth.clone();
    history.slice(1, 1) += at::randn_like(history.slice(1, 1)) * 0.3;
    at::Tensor positions = at::arange(kFrames, at::kLong).repeat({kClips, 1});
    positions[2].slice(0, 3) += 9;  // clip 2: a break in the run resets what was swept
    const at::Tensor own = at::ones({kClips}, at::kBool);
    const at::Tensor frames =
        consistent_frames(s.truth, history, positions, own, s.overlay, kMove, true);
    const at::Tensor expected = reference_frames(s, history, positions, own, true);
    EXPECT_TRUE(at::allclose(frames, expected))
        << "seed " << seed << ": max difference " << (frames - expected).abs().max().item<float>();
    EXPECT_FALSE(frames.equal(reference_frames(s, history, positions, own, false)))
        << "seed " << seed << ": some pixel was uncovered";
  }
  // One clip walking right every frame (choice 4: pixel p shows p + (0, kMove)): what the sprite
  // covered in frame 1 sits kMove to its left in frame 2 and 2·kMove in frame 3.
  Scroll s = scrolling_clips(9);
  for (auto& moves : s.moves) std::fill(moves.begin() + 1, moves.end(), 4);
  at::Tensor truth = s.truth.clone();
  // Rebuild the truth as a pure walk right of the first frame with the sprite repainted.
  for (int f = 1; f < kFrames; ++f) {
    truth.select(1, f).zero_();
    truth.select(1, f).slice(3, 0, kSide - kMove) =
        truth.select(1, f - 1).slice(3, kMove, kSide).clone();
    truth.select(1, f).slice(3, kSide - kMove, kSide).uniform_(-1, 1);
    truth.select(1, f).masked_scatter_(
        s.overlay.expand({kClips, 3, kSide, kSide}),
        at::rand({kClips * 3 * s.overlay.sum().item<int64_t>()}) * 2 - 1);
  }
  s.truth = truth;
  at::Tensor history = truth.clone();
  // The model's frame 1 left a copy of the sprite where the sprite's content moves to.
  history[0][1].slice(1, 6, 10).slice(2, 2, 6) = 0.9;
  const at::Tensor positions = at::arange(kFrames, at::kLong).repeat({kClips, 1});
  const at::Tensor own = at::ones({kClips}, at::kBool);
  const at::Tensor kept = consistent_frames(truth, history, positions, own, s.overlay, kMove);
  const at::Tensor erased =
      consistent_frames(truth, history, positions, own, s.overlay, kMove, true);
  // Target of frame 2 (index 1) at the copy moved one step left: columns 2 − kMove + ... the copy
  // at columns 2..5 of frame 1 shows at columns -2..1 of frame 2; columns 0..1 hold it.
  const at::Tensor kept_copy = kept[0][1].slice(1, 6, 10).slice(2, 0, 2);
  EXPECT_TRUE(kept_copy.eq(0.9f).all().item<bool>()) << "the consistent target keeps the copy";
  const at::Tensor game = truth[0][2].slice(1, 6, 10).slice(2, 0, 2);
  EXPECT_TRUE(erased[0][1].slice(1, 6, 10).slice(2, 0, 2).equal(game))
      << "with uncovered pixels followed, the game's frame replaces it";
}

// The note's premise on the game itself: outside the overlays and the strip that scrolls in, a
// frame is its predecessor moved one step or none. Only animation breaks it (waves drift a pixel
// every 4 frames, Note [One patch per step]).
TEST(ConsistentTarget, TheGameIsAScrollOutsideItsOverlays) {
  ClipSpec spec;
  spec.max_walk = 200;
  const ClipBatch clips = make_clip_batch(spec, 6, 11, 0);
  const at::Tensor frames =
      consistent_frames(clips.frames, clips.frames, clips.positions, at::ones({6}, at::kBool),
                        overlay_mask(spec.width, spec.height), 8);
  const at::Tensor same = (frames - clips.frames.slice(1, 1)).abs().amax(2) < 1e-6;
  const double share = same.to(at::kFloat).mean().item<double>();
  EXPECT_GT(share, 0.99) << "share of pixels the move explains exactly";
}

TEST(ConsistentTarget, OverlaysAreThePlayerAndTheHud) {
  const at::Tensor mask = overlay_mask(128, 128);
  game::GameConfig config;
  const game::Game game(config);
  for (const game::PixelRect& r : {game.player_rect(), game.hud_rect()}) {
    ASSERT_GT(r.width * r.height, 0);
    EXPECT_TRUE(mask.slice(0, r.y, r.y + r.height).slice(1, r.x, r.x + r.width).all().item<bool>());
  }
  EXPECT_FALSE(mask[127][127].item<bool>());
}

// The noisy frames are remade from the new frames with the same noise: x_t = (1 − t)·x0 + t·ε.
TEST(ConsistentTarget, RetargetingKeepsTheNoise) {
  at::manual_seed(6);
  ClipBatch clips;
  clips.frames = at::rand({2, 4, 3, 8, 8}) * 2 - 1;
  clips.actions = at::randint(0, 5, {2, 4}, at::kLong);
  clips.positions = at::arange(4, at::kLong).repeat({2, 1});
  TeacherForcingBatch batch = make_teacher_forcing_batch(clips, NoiseSpec{}, 4, 1, 6, at::kCPU);
  const at::Tensor eps = batch.target + batch.clean.slice(1, 1);
  const at::Tensor context = batch.input.frames.slice(1, 0, 4).clone();
  const at::Tensor frames = at::rand({2, 3, 3, 8, 8});
  use_consistent_target(batch, frames);
  const at::Tensor t = batch.input.t.slice(1, 4).view({2, 3, 1, 1, 1});
  EXPECT_TRUE(at::allclose(batch.target, eps - frames));
  EXPECT_TRUE(at::allclose(batch.input.frames.slice(1, 4), (1 - t) * frames + t * eps));
  EXPECT_TRUE(batch.input.frames.slice(1, 0, 4).equal(context));
  EXPECT_TRUE(batch.clean.slice(1, 1).equal(frames));
  EXPECT_TRUE(batch.clean.slice(1, 0, 1).equal(clips.frames.slice(1, 0, 1)));
}

}  // namespace
}  // namespace wc::train
