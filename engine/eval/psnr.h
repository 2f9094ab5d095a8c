// Peak signal-to-noise ratio between RGB8 frames (DESIGN.md §13 fidelity), optionally over a
// pixel mask so screen-fixed overlays (player sprite, HUD) can be left out.
#pragma once

#include <ATen/ATen.h>

#include <vector>

#include "engine/game/game.h"

namespace wc::eval {

// Identical frames have infinite PSNR; we report this cap instead so means and JSON stay finite.
inline constexpr double kPsnrCapDb = 100.0;

// Mean of the squared differences over the R, G and B values (alpha ignored) of the pixels where
// `mask` (bool [H, W], optional) is true. Throws wc::Error for mismatched frames or an empty mask.
double mean_squared_error(const at::Tensor& a, const at::Tensor& b,
                          const at::Tensor& mask = at::Tensor());

// 10·log10(255² / mse), at most kPsnrCapDb.
double psnr_from_mse(double mse);

double psnr(const at::Tensor& a, const at::Tensor& b, const at::Tensor& mask = at::Tensor());

// A bool [H, W] mask that is true everywhere except inside `excluded` (clipped to the frame).
at::Tensor mask_excluding(int width, int height, const std::vector<game::PixelRect>& excluded);

}  // namespace wc::eval
