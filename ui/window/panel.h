// The viewer's Dear ImGui panel (DESIGN.md §10), in the letterbox bars on both sides of the
// frame: left ("inspect") FPS, frame times per stage, rollout length and, for the world model,
// the head map, counts and cache size per head type with a history; right ("worldcast") pause,
// step, reset, screenshot, record, the policy selector, re-classify and the threshold sliders.
// Draws with ImGui calls only; the state and the logic behind every widget live in PanelModel,
// so tests run them without a window.
#pragma once

#include <cstdint>
#include <string>

#include "ui/frames/letterbox.h"
#include "ui/inference/live_stats.h"
#include "ui/window/panel_model.h"

namespace wc::ui {

// Each panel window's initial width; the player leaves this much room on both sides.
inline constexpr float kPanelWidth = 330.0f;

// What the render side knows this frame (the rest comes from the inference thread's snapshot).
struct PanelView {
  int frame_width = 0;
  int frame_height = 0;
  const char* held_action = "none";  // what the keys say now
  Filter filter = Filter::kNearest;
  ScaleMode scale_mode = ScaleMode::kInteger;
  std::string device_name;
  uint64_t validation_errors = 0;
  std::string last_screenshot;
  // Moves the panel back to the top-right corner (after the window changed size).
  bool reanchor = false;
};

// What the user asked of the render side this frame (the rest goes through PanelModel).
struct PanelRequests {
  bool screenshot = false;
  bool filter_changed = false;
  Filter filter = Filter::kNearest;
  bool scale_mode_changed = false;
  ScaleMode scale_mode = ScaleMode::kInteger;
};

// Draws the panel window inside an ImGui frame (between NewFrame and Render). `stats` may be
// null before the inference thread's first snapshot.
PanelRequests draw_panel(const PanelView& view, const LiveStats* stats, PanelModel& model);

}  // namespace wc::ui
