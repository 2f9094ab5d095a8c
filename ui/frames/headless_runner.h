// `worldcast play --headless`: N frames from a FrameSource through the offscreen renderer into
// PNG files, frames.jsonl (one record per frame, written as the run goes: Note [Headless
// records]) and run.json (settings and the summary). No window system is touched.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "engine/rollout/frame_source.h"
#include "ui/frames/frame_route.h"
#include "ui/frames/present_pass.h"

namespace wc::ui {

struct HeadlessOptions {
  int frames = 1;
  std::string out_dir;
  // One action per frame; frames past the end of the script get Action::kNone.
  std::vector<Action> actions;
  std::string actions_file;  // recorded in run.json only
  uint64_t seed = 0;
  int scale = 1;  // target = frame size * scale, unless target_width/height are set
  int target_width = 0;
  int target_height = 0;
  PresentSettings present;
  bool validate = false;
  // Write every n-th frame as PNG (frame 0 always); 0 writes none. Long runs (10 000 frames
  // for flatness) need the timings, not 300 MB of pictures.
  int png_every = 1;
  // Rewrite DIR/summary.json (the run's summary so far) every this many frames; 0 = only at the
  // end. A run cut short (a time limit) still leaves its numbers.
  int summary_every = 0;
  // How the source was made (model config, weights, policy and settings), for run.json.
  nlohmann::json source_meta = nlohmann::json::object();
  FrameRoute route;  // empty: the CPU frame path
};

struct HeadlessReport {
  int frames = 0;
  int target_width = 0;
  int target_height = 0;
  double render_ms_p50 = 0.0;  // upload + present pass + readback, per frame
  double render_ms_p99 = 0.0;
  double total_ms_p50 = 0.0;  // produce + render + PNG write
  uint64_t validation_errors = 0;
  uint64_t validation_warnings = 0;
  std::string device_name;
};

// The largest headless output side in pixels (a scale that would pass it is refused up front).
inline constexpr int64_t kMaxHeadlessSide = 16384;

// Resets `source` to options.seed, then for each frame i steps it with actions[i], renders it,
// writes DIR/frame_NNNNN.png (see png_every) and appends its record to DIR/frames.jsonl; finally
// writes DIR/run.json and DIR/summary.json. Creates DIR if needed, once the renderer is made.
// Throws wc::Error before writing anything when DIR already holds a run (run.json,
// summary.json, frames.jsonl or frame_*.png) or the output would pass kMaxHeadlessSide.
HeadlessReport run_headless(const HeadlessOptions& options, FrameSource& source);

}  // namespace wc::ui
