// `worldcast play`: a GLFW window with our Vulkan swapchain, the present pass and the ImGui
// panel, playing a FrameSource from the keyboard (or a script). The source runs on the
// inference thread (inference_thread.h); this render thread never waits for it. Only this path
// touches GLFW.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "engine/rollout/frame_source.h"
#include "ui/frames/frame_route.h"
#include "ui/frames/present_pass.h"
#include "ui/inference/live_stats.h"
#include "ui/inference/policy_control.h"
#include "ui/window/player_script.h"

namespace wc::ui {

// A key event fed through the player's input path before rendering frame `frame`.
struct InjectedKey {
  int frame = 0;
  int key = 0;     // GLFW_KEY_*
  int action = 0;  // GLFW_PRESS / GLFW_RELEASE
};

// A window resize requested before rendering frame `frame` (exercises swapchain rebuilds).
struct InjectedResize {
  int frame = 0;
  int width = 0;  // 0 x 0: back to the initial size
  int height = 0;
};

struct WindowOptions {
  int scale = 5;  // initial window = frame size * scale (the window stays resizable)
  uint64_t seed = 0;
  bool validate = false;
  bool vsync = true;
  PresentSettings present;
  // Scripted actions drive frames 0..size-1; the keyboard takes over after the script.
  std::vector<Action> actions;
  std::string screenshot_dir = ".";
  // If set, F12 writes exactly this file (tests, README) instead of a numbered one.
  std::string screenshot_path;
  // Stop after this many rendered frames (0: run until Esc or the window closes).
  int max_frames = 0;
  std::vector<InjectedKey> injected_keys;
  std::vector<InjectedResize> injected_resizes;
  // See Note [Frame pacing] in inference_thread.h.
  bool paced = true;
  double frame_rate = 0.0;  // frames per second when paced; 0: one per presented frame
  // Record (F9 / the panel) makes numbered folders here.
  std::string record_dir = ".";
  // Fields for record.json telling how to rebuild the source (config, weights, policy).
  nlohmann::json record_meta = nlohmann::json::object();
  // Scripted play (smoke tests); not owned.
  PlayerScript* script = nullptr;
  FrameRoute route;  // empty: the CPU frame path
};

struct WindowReport {
  int frames_rendered = 0;
  uint64_t frames_produced = 0;
  double frame_ms_p50 = 0.0;
  double frame_ms_p99 = 0.0;
  uint64_t validation_errors = 0;
  uint64_t validation_warnings = 0;
  int swapchain_rebuilds = 0;
  std::vector<std::string> screenshots;
  std::shared_ptr<const LiveStats> final_stats;  // the inference thread's last snapshot
  std::vector<std::string> script_failures;      // options.script's verdict
};

// Opens the window and plays until Esc, the window closing or options.max_frames. `control` is
// the source's policy control (null for the game).
WindowReport run_window_player(const WindowOptions& options, FrameSource& source,
                               PolicyControl* control = nullptr);

// The smoke test's key script for a run of `frames` frames (needs frames >= 30): move right
// and up, pause, single-step, resume, reset, F12 near the end, then Esc.
std::vector<InjectedKey> smoke_test_keys(int frames);
// The smoke test's resizes: a smaller window midway (swapchain rebuild, new letterbox), then
// back to the initial size for the screenshot.
std::vector<InjectedResize> smoke_test_resizes(int frames);

}  // namespace wc::ui
