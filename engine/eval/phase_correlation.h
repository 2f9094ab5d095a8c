// Integer translation between two frames by phase correlation (the peak of the inverse FFT of the
// normalised cross-power spectrum), and the camera direction it implies: the estimator behind
// action responsiveness (DESIGN.md §13).
#pragma once

#include <ATen/ATen.h>

#include <vector>

#include "engine/game/action.h"
#include "engine/game/game.h"

namespace wc::eval {

// Content of `to` sits at (x + dx, y + dy) of where it was in `from`.
struct Shift {
  int dx = 0;
  int dy = 0;
  double peak =
      0.0;  // height of the correlation peak: 1 for a perfect circular shift, ~0 for noise
};

struct PhaseCorrelationOptions {
  // Only shifts with |dx|, |dy| <= max_shift are candidates (the game scrolls a few pixels per
  // frame, so a bound rejects spurious far peaks); -1 searches the whole plane, shifts taken
  // in (-N/2, N/2].
  int max_shift = -1;
  // A Hann window against the wrap-around edges (a scroll is not a circular shift).
  bool hann = true;
  // Screen-fixed overlays (the player sprite, the HUD) that do not scroll with the world: their
  // pixels are replaced by the frame's mean luma before windowing so they add no zero-shift peak.
  std::vector<game::PixelRect> ignore;
};

// Throws wc::Error for mismatched or invalid frames. Ties (e.g. two flat frames) resolve to (0, 0).
Shift estimate_shift(const at::Tensor& from, const at::Tensor& to,
                     const PhaseCorrelationOptions& options = {});

// The direction the camera moved to scroll content by `shift` (content moving left = the camera
// moved right): the dominant axis decides; (0, 0) and diagonal ties give kNone.
game::Action camera_direction(const Shift& shift);

// The content shift a camera move of `pixels` in `direction` causes (kNone: (0, 0)).
Shift content_shift_of(game::Action direction, int pixels);

}  // namespace wc::eval
