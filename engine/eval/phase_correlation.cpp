// See phase_correlation.h. Cross-power R = B·conj(A) / |B·conj(A)| has inverse transform δ(x − s)
// when b(x) = a(x − s), so the peak of ifft2(R) sits at the content shift s.
#include "engine/eval/phase_correlation.h"

#include <cstdlib>

#include "engine/eval/frame_tensor.h"
#include "engine/eval/psnr.h"

namespace wc::eval {
namespace {

// Luma with ignored rectangles filled by the mean of the rest, zero-mean, optionally windowed.
at::Tensor prepared_plane(const at::Tensor& frame, const PhaseCorrelationOptions& options,
                          const at::Tensor& keep, const at::Tensor& window) {
  at::Tensor plane = luma(frame);
  if (keep.defined()) {
    const double mean = plane.masked_select(keep).mean().item<double>();
    plane = at::where(keep, plane, at::full_like(plane, mean));
  }
  plane = plane - plane.mean();
  if (window.defined()) plane = plane * window;
  return plane;
}

int signed_index(int64_t index, int64_t size) {
  return static_cast<int>(index > size / 2 ? index - size : index);
}

}  // namespace

Shift estimate_shift(const at::Tensor& from, const at::Tensor& to,
                     const PhaseCorrelationOptions& options) {
  check_frame_pair(from, to, "phase correlation");
  const int64_t h = from.size(0), w = from.size(1);
  at::Tensor keep;
  if (!options.ignore.empty()) {
    keep = mask_excluding(static_cast<int>(w), static_cast<int>(h), options.ignore);
    if (keep.sum().item<int64_t>() == 0) keep = at::Tensor();  // nothing left: use everything
  }
  at::Tensor window;
  if (options.hann) {
    const auto opts = at::TensorOptions().dtype(at::kDouble);
    window = at::outer(at::hann_window(h, /*periodic=*/false, opts),
                       at::hann_window(w, /*periodic=*/false, opts));
  }
  const at::Tensor a = at::fft_fft2(prepared_plane(from, options, keep, window));
  const at::Tensor b = at::fft_fft2(prepared_plane(to, options, keep, window));
  const at::Tensor cross = b * a.conj();
  // The epsilon keeps frequencies with no energy (flat frames) at zero instead of NaN.
  const at::Tensor normalised = cross / (cross.abs() + 1e-12);
  const at::Tensor surface = at::real(at::fft_ifft2(normalised)).contiguous();
  const auto r = surface.accessor<double, 2>();

  Shift best;
  best.peak = r[0][0];
  const auto consider = [&](int64_t y, int64_t x) {
    if (r[y][x] > best.peak) {
      best.peak = r[y][x];
      best.dx = signed_index(x, w);
      best.dy = signed_index(y, h);
    }
  };
  if (options.max_shift < 0) {
    for (int64_t y = 0; y < h; ++y) {
      for (int64_t x = 0; x < w; ++x) consider(y, x);
    }
  } else {
    const int64_t m = options.max_shift;
    for (int64_t dy = -m; dy <= m; ++dy) {
      for (int64_t dx = -m; dx <= m; ++dx) consider(((dy % h) + h) % h, ((dx % w) + w) % w);
    }
  }
  return best;
}

game::Action camera_direction(const Shift& shift) {
  const int ax = std::abs(shift.dx), ay = std::abs(shift.dy);
  if (ax == ay) return game::Action::kNone;  // no motion, or a diagonal we cannot attribute
  if (ax > ay) return shift.dx < 0 ? game::Action::kRight : game::Action::kLeft;
  return shift.dy < 0 ? game::Action::kDown : game::Action::kUp;
}

Shift content_shift_of(game::Action direction, int pixels) {
  Shift shift;
  switch (direction) {
    case game::Action::kNone:
      break;
    case game::Action::kUp:
      shift.dy = pixels;
      break;
    case game::Action::kDown:
      shift.dy = -pixels;
      break;
    case game::Action::kLeft:
      shift.dx = pixels;
      break;
    case game::Action::kRight:
      shift.dx = -pixels;
      break;
  }
  return shift;
}

}  // namespace wc::eval
