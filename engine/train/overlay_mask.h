// The screen-fixed overlays (the player sprite and the HUD) as a pixel mask, for losses and
// corruptions that treat them apart from the scrolling world.
#pragma once

#include <ATen/ATen.h>

namespace wc::train {

// game::screen_overlays at this frame size, as a [H, W] bool mask (true inside).
at::Tensor overlay_mask(int width, int height);

}  // namespace wc::train
