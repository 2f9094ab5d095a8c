// Record in the viewer: the generated frames as a PNG sequence plus the action log in the
// action-script format, so `worldcast play --headless --actions DIR/actions.txt` replays them.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "engine/rollout/frame_source.h"

namespace wc::ui {

// Note [Replayable recordings]
// A headless run resets the source to its seed and writes frame_NNNNN.png for step N (source
// frame N + 1). A recording may start mid-game, so it keeps that numbering: the PNGs are named
// by the frame they show, and actions.txt holds every action since the last reset (not only
// the recorded ones), so a headless replay with the same source, seed and settings writes the
// same files under the same names. A reset ends the recording. Settings changed or a policy
// switched while recording are listed in record.json under "changes": a replay runs with the
// settings the recording started with, so frames after the first change will differ.
class SessionRecorder {
 public:
  // Creates `dir` (it must not hold a record.json already). `meta` goes into record.json
  // (source, seed, policy and settings, a token model's sampling, the replay command line).
  SessionRecorder(std::string dir, nlohmann::json meta);
  ~SessionRecorder();
  SessionRecorder(const SessionRecorder&) = delete;
  SessionRecorder& operator=(const SessionRecorder&) = delete;

  // A generated frame; `frame_index` is the source's index of it (>= 1).
  void add_frame(const uint8_t* rgba, int width, int height, uint64_t frame_index);
  // A settings change or policy switch applied before frame `frame_index` + 1.
  void note_change(uint64_t frame_index, const std::string& what);
  // Writes actions.txt (every action since the reset) and record.json, both atomically.
  void finish(const std::vector<Action>& actions_since_reset, const std::string& reason);

  const std::string& dir() const { return dir_; }
  uint64_t frames() const { return frames_; }

 private:
  std::string dir_;
  nlohmann::json meta_;
  nlohmann::json changes_ = nlohmann::json::array();
  uint64_t first_frame_ = 0;
  uint64_t last_frame_ = 0;
  uint64_t frames_ = 0;
  bool finished_ = false;
};

// The PNG name a headless run uses for source frame `frame_index` (>= 1).
std::string recorded_frame_name(uint64_t frame_index);

}  // namespace wc::ui
