// Frames as the metrics see them: RGBA8 bytes copied into CPU uint8 tensors [H, W, 4], and the
// luma plane that the structural metrics (SSIM, phase correlation) work on.
#pragma once

#include <ATen/ATen.h>

#include <cstdint>

namespace wc::eval {

// A copy of one width x height RGBA8 frame as a CPU uint8 tensor [H, W, 4].
at::Tensor copy_rgba(const uint8_t* rgba, int width, int height);

// Throws wc::Error (prefixed by `what`) unless `frame` is a CPU uint8 tensor [H, W, C], C >= 3.
void check_frame(const at::Tensor& frame, const char* what);
// Both frames valid and of one size.
void check_frame_pair(const at::Tensor& a, const at::Tensor& b, const char* what);

// The RGB channels as float64 [3, H, W] in [0, 255] (alpha dropped).
at::Tensor rgb_planes(const at::Tensor& frame);

// BT.601 luma Y = 0.299 R + 0.587 G + 0.114 B as float64 [H, W] in [0, 255].
at::Tensor luma(const at::Tensor& frame);

// The frame's detail: the mean absolute luma difference between horizontal and between vertical
// neighbours, averaged. Blur and washed-out content lower it, speckle raises it.
double mean_gradient(const at::Tensor& frame);

}  // namespace wc::eval
