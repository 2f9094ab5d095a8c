// History whose screen-fixed overlays carry the damage play does to them, for the model to
// repair (Note [Overlay repair]).
#pragma once

#include <ATen/ATen.h>

#include <cstdint>

namespace wc::train {

// Note [Overlay repair]
// After a few hundred frames of turns and short holds the model's player sprite has decayed: a
// pixel at its edge takes the scroll's move instead of staying, so grass or a
// neighbouring sprite pixel lands in the sprite, and from then on "as it is" keeps the damage.
// The 10 000-frame stability runs end with every idle change inside the 24×24 pixels around the
// sprite. Nothing in training asked for the repair: the true history always holds an intact
// sprite, and the own rollout (Note [Deep rollout]) is 23 frames deep, well before the damage
// starts. So a share of the clips gets the damage as play makes it: from a frame k of the
// history on, a random share of the overlay pixels (the sprite and the HUD) shows what one of
// the four moves brought there at frame k, held from then on as "as it is" holds it. The noisy
// frames after k still reach for the game's frames (or, in own-history clips, for the game's
// overlay: Note [Consistent target]), so the loss pays for passing the damage on and the
// network learns to draw the overlay back. The sink stays intact: at play it is a real frame.

struct OverlayDamage {
  at::Tensor history;  // the history with the damage, like the input
  at::Tensor damaged;  // [B] bool: the clips that got damage
  at::Tensor first;    // [B] int64: the first damaged frame of each damaged clip (else −1)
  at::Tensor pixels;   // [B, H, W] bool: the damaged pixels of each clip
};

// The most of an overlay's pixels one clip's damage takes: each damaged clip draws its share
// uniformly in (0, kMaxDamageShare].
inline constexpr double kMaxDamageShare = 0.5;

// `history` [B, F, C, H, W] (frames_per_block frames form the sink), `overlay` [H, W] bool;
// `share` of the clips is damaged. Every draw follows from `seed`. A clip shorter than three
// blocks has no frame to damage after the sink that a later block could read, and stays intact.
OverlayDamage damage_overlays(const at::Tensor& history, const at::Tensor& overlay, int move_pixels,
                              double share, int frames_per_block, uint64_t seed);

}  // namespace wc::train
