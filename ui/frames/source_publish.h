// Publishing a FrameSource's current frame into a FrameSink by the cheapest route: a world-model
// Session on CUDA hands its frame to a sink that takes device frames (the CUDA path: no copy to
// the host); every other pairing publishes RGBA8 bytes.
#pragma once

#include <ATen/ATen.h>

#include "engine/rollout/frame_source.h"
#include "ui/frames/device_frame.h"
#include "ui/frames/frame_sink.h"

namespace wc::ui {

// Whether publish_source_frame would take the device route for this pair.
bool publishes_device_frames(const FrameSource& source, const FrameSink& sink);

// Call once when the pair is set up: if frames will take the device route, the Session stops
// copying every block to the host (Session::set_host_frames(false); rgba() still works, lazily).
// Returns publishes_device_frames(source, sink).
bool route_frames_to_device(FrameSource& source, const FrameSink& sink);

// Publishes source.rgba() or, per publishes_device_frames, the Session's device frame, with
// source.frame_index(). The producer thread calls it after each step.
void publish_source_frame(const FrameSource& source, FrameSink& sink);

// A DeviceFrame view of `frame` ([3, H, W], CUDA, float32 or bfloat16), ready on the current
// CUDA stream of its device. Throws wc::Error for other shapes, devices or dtypes, and in a
// build without CUDA.
DeviceFrame device_frame_of(const at::Tensor& frame);

}  // namespace wc::ui
