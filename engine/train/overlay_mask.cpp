// See overlay_mask.h.
#include "engine/train/overlay_mask.h"

#include "engine/game/game.h"

namespace wc::train {

at::Tensor overlay_mask(int width, int height) {
  at::Tensor mask = at::zeros({height, width}, at::kBool);
  for (const game::PixelRect& r : game::screen_overlays(width, height)) {
    if (r.width > 0 && r.height > 0) {
      mask.slice(0, r.y, r.y + r.height).slice(1, r.x, r.x + r.width).fill_(true);
    }
  }
  return mask;
}

}  // namespace wc::train
