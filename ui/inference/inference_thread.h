// The inference thread (DESIGN.md §4): owns the FrameSource (the world model or the game) and
// everything it holds, takes the newest action per generated frame, applies commands between
// blocks, publishes frames into the FrameSink and stats as immutable snapshots. The render
// thread only offers actions, sends commands and reads snapshots: it never waits for the model.
#pragma once

#include <array>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>
#include <vector>

#include "engine/game/action.h"
#include "engine/rollout/frame_source.h"
#include "ui/frames/frame_route.h"
#include "ui/frames/frame_sink.h"
#include "ui/inference/action_mailbox.h"
#include "ui/inference/frame_pacer.h"
#include "ui/inference/inference_command.h"
#include "ui/inference/live_stats.h"
#include "ui/inference/policy_control.h"

namespace wc::ui {

class SessionRecorder;

struct InferenceOptions {
  uint64_t seed = 0;  // the rollout's seed at start and on every Reset
  // Scripted actions for the first generated frames; the mailbox (keys) takes over after them.
  std::vector<Action> script;
  // Note [Frame pacing]: with pacing on, a frame is generated only against a credit the render
  // loop grants per presented frame (at most kMaxCredits banked), so a fast source (the game)
  // runs at the display's rate instead of thousands of frames per second; a model slower than
  // the display always finds a credit and runs flat out. Off: as fast as the source goes.
  bool paced = true;
  // With pacing: frames per second to generate (Note [Game frame rate]); 0: one per presented
  // frame.
  double frame_rate = 0.0;
  bool start_paused = false;
  // Extra fields for a recording's record.json (how to rebuild the source: config, weights).
  nlohmann::json record_meta = nlohmann::json::object();
  // How a frame reaches the sink (only `publish` is used here); empty: its RGBA8 bytes.
  FrameRoute route;
};

class InferenceThread {
 public:
  static constexpr int kMaxCredits = 2;

  // `control` is null for sources without an attention policy. The source, sink and control
  // must outlive this object; from start() on, only the inference thread touches them.
  InferenceThread(FrameSource& source, FrameSink& sink, PolicyControl* control,
                  InferenceOptions options);
  ~InferenceThread();  // stop()
  InferenceThread(const InferenceThread&) = delete;
  InferenceThread& operator=(const InferenceThread&) = delete;

  // Starts the thread: it resets the source to options.seed, publishes that frame, then plays.
  void start();
  // Finishes a recording, stops and joins the thread (idempotent).
  void stop();

  // Render thread (any thread): never blocks on the model.
  void offer_action(Action action) { actions_.offer(action); }
  void send(InferenceCommand command);
  void frame_presented();
  std::shared_ptr<const LiveStats> stats() const { return stats_.latest(); }

  // Tests and tools: waits until a snapshot satisfies `ready` (true) or `timeout_s` passes
  // (false). The render loop never calls this.
  bool wait_for(const std::function<bool(const LiveStats&)>& ready, double timeout_s) const;

 private:
  void run();
  bool ready_to_produce() const;  // mutex_ held
  void apply(std::deque<InferenceCommand>& commands);
  void apply_one(const InferenceCommand& command);
  void reset_source(uint64_t seed);
  void produce();
  void start_recording(const std::string& dir);
  void stop_recording(const std::string& reason);
  void publish_stats();

  FrameSource& source_;
  FrameSink& sink_;
  PolicyControl* control_;
  const InferenceOptions options_;
  std::thread thread_;

  ActionMailbox actions_;
  StatsMailbox stats_;
  mutable std::mutex stats_wait_mutex_;
  mutable std::condition_variable stats_published_;

  // Shared with the render thread, guarded by mutex_.
  std::mutex mutex_;
  std::condition_variable wake_;
  std::deque<InferenceCommand> queue_;
  int credits_ = 1;
  FramePacer pacer_;  // guarded by mutex_
  bool stop_ = false;

  // The inference thread's own state (also read by ready_to_produce under mutex_, but only
  // ever from that thread).
  bool paused_ = false;
  bool step_pending_ = false;
  bool failed_ = false;
  uint64_t seed_ = 0;
  size_t script_position_ = 0;
  uint64_t frames_produced_ = 0;
  uint64_t commands_applied_ = 0;
  uint64_t command_frame_ = 0;
  Action last_action_ = Action::kNone;
  std::array<uint64_t, game::kActionCount> action_counts_{};
  double produce_ms_ = 0.0;
  std::string error_;
  std::vector<Action> actions_since_reset_;
  std::unique_ptr<SessionRecorder> recorder_;
  std::string record_note_;
  std::string source_name_;
  std::vector<std::string> policy_names_;
  PolicyGeometry geometry_;
};

}  // namespace wc::ui
