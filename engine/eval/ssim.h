// Structural similarity (Wang, Bovik, Sheikh, Simoncelli 2004) between RGB8 frames, computed on
// BT.601 luma with the paper's constants, as the fidelity metric of DESIGN.md §13.
#pragma once

#include <ATen/ATen.h>

namespace wc::eval {

// Note [SSIM definition]: the reference implementation's choices, so numbers compare with
// published ones: an 11x11 Gaussian window with σ = 1.5 (normalised to sum 1), K1 = 0.01,
// K2 = 0.03, dynamic range L = 255, statistics at "valid" window positions only (no padding), the
// mean of the SSIM map. One plane: luma Y = 0.299 R + 0.587 G + 0.114 B, not per channel, since
// the game's structure (edges, texture) lives in luma and one number per frame is what we report.
inline constexpr int kSsimWindow = 11;
inline constexpr double kSsimSigma = 1.5;

// Throws wc::Error for mismatched frames or frames smaller than the window.
double ssim(const at::Tensor& a, const at::Tensor& b);

// The normalised Gaussian window, float64 [kSsimWindow, kSsimWindow].
at::Tensor ssim_window();

}  // namespace wc::eval
