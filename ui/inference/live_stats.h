// The inference thread's report to the render thread: an immutable snapshot per generated frame
// (or applied command), handed over by swapping a shared_ptr under a mutex (C++17 has no
// std::atomic<std::shared_ptr>), so the panel reads a consistent picture without ever waiting
// for the model.
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <mutex>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "engine/game/action.h"
#include "engine/rollout/frame_source.h"
#include "ui/inference/policy_control.h"

namespace wc::ui {

struct LiveStats {
  std::string source_name;
  uint64_t frame_index = 0;       // rollout length: frames since the last reset
  uint64_t frames_produced = 0;   // frames generated since the thread started
  Action action = Action::kNone;  // what the newest frame consumed
  std::array<uint64_t, game::kActionCount> action_counts{};  // frames per action, all resets
  bool paused = false;
  double frame_rate = 0.0;        // pacing: frames per second, 0 = one per presented frame
  bool failed = false;            // the source threw; nothing more is produced
  double produce_ms = 0.0;        // the last frame: source step + publish into the frame sink
  uint64_t commands_applied = 0;  // commands taken from the queue so far
  uint64_t command_frame = 0;     // frame_index when the last commands were applied
  std::string error;              // the last rejected command or the failure ("" = none)

  // Sources with an attention policy (the world model) only.
  bool has_policy = false;
  std::vector<std::string> policy_names;
  std::string policy;
  nlohmann::json settings;  // the policy's full current settings
  PolicyGeometry geometry;
  PolicyRunStats run;

  // Recording (Record in the panel).
  bool recording = false;
  std::string record_dir;
  uint64_t recorded_frames = 0;
  std::string record_note;  // why the last recording ended, or a replay caveat
};

class StatsMailbox {
 public:
  void publish(std::shared_ptr<const LiveStats> stats);
  // The newest snapshot (never null once the producer published its first one).
  std::shared_ptr<const LiveStats> latest() const;

 private:
  mutable std::mutex mutex_;
  std::shared_ptr<const LiveStats> latest_;
};

}  // namespace wc::ui
