// The viewer's Dear ImGui panel (DESIGN.md §10; today: FPS, frame-time plot with p50/p99, the
// run's state and its controls). Draws with ImGui calls only, so tests run it without a GPU.
#pragma once

#include <cstdint>
#include <string>

#include "ui/frame_time_history.h"
#include "ui/letterbox.h"

namespace wc::ui {

// The panel's initial width; the player leaves this much room beside the frame.
inline constexpr float kPanelWidth = 310.0f;

// What the panel shows this frame.
struct PanelView {
  std::string source_name;
  int frame_width = 0;
  int frame_height = 0;
  uint64_t frame_index = 0;
  const char* action_name = "none";
  bool paused = false;
  Filter filter = Filter::kNearest;
  ScaleMode scale_mode = ScaleMode::kInteger;
  double produce_ms = 0.0;
  std::string device_name;
  uint64_t validation_errors = 0;
  std::string last_screenshot;
  // Moves the panel back to the top-right corner (after the window changed size).
  bool reanchor = false;
};

// What the user asked for through the panel this frame (keys reach the player directly).
struct PanelRequests {
  bool toggle_pause = false;
  bool single_step = false;
  bool reset = false;
  bool screenshot = false;
  bool filter_changed = false;
  Filter filter = Filter::kNearest;
  bool scale_mode_changed = false;
  ScaleMode scale_mode = ScaleMode::kInteger;
};

// Draws the panel window inside an ImGui frame (between NewFrame and Render).
PanelRequests draw_panel(const PanelView& view, const FrameTimeHistory& frame_times);

}  // namespace wc::ui
