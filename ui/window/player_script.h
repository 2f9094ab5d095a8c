// Scripted play for the windowed smoke tests: each rendered frame a script may press keys
// (through PlayerInput, as GLFW would) and use the panel (through PanelModel, as the widgets
// do), reacting to the inference thread's snapshots, so the test drives the real paths.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "ui/inference/live_stats.h"
#include "ui/window/panel_model.h"
#include "ui/window/player_input.h"

namespace wc::ui {

struct ScriptFrame {
  int frames_rendered = 0;
  const LiveStats* stats = nullptr;  // the newest snapshot; null before the first
  PanelModel* panel = nullptr;
  PlayerInput* input = nullptr;
};

class PlayerScript {
 public:
  virtual ~PlayerScript() = default;
  // Called once per rendered frame, before that frame's keys and panel intents are taken.
  virtual void on_frame(const ScriptFrame& frame) = 0;
  // What went wrong (empty: the script ran to its end and saw what it expected).
  virtual std::vector<std::string> failures(const LiveStats* final_stats) const = 0;
};

// The world-model smoke test (needs a policy with HeadCast keys, e.g. headcast with window 3):
// moves right then up; once the heads are cast, drags theta to 0.5; switches to tempcache and
// back to headcast (which comes back with theta = 0.5 and casts again); pauses, single-steps,
// resumes; records a frame or more (F9, F9); sets theta to the heads' median S_dummy (a mixed
// cast for the picture); after at least `min_frames` rendered frames takes the F12 screenshot
// and presses Esc.
std::unique_ptr<PlayerScript> make_model_smoke_script(int min_frames);

}  // namespace wc::ui
