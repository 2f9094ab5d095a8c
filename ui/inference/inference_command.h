// Commands from the render thread (keys, the panel, tests) to the inference thread. They are
// applied between AR blocks, never mid-block (DESIGN.md §4), in the order they were sent.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>

namespace wc::ui {

struct InferenceCommand {
  enum class Kind {
    kTogglePause,
    kSingleStep,    // one frame while paused
    kReset,         // the rollout starts over from `seed`
    kConfigure,     // `settings`: some keys of the running policy
    kSwitchPolicy,  // `name` with `settings`, keeping the game (Note [Policy switch])
    kReclassify,
    kStartRecording,  // into the folder `name`
    kStopRecording,
    kSetFrameRate,   // `value` frames per second (Note [Game frame rate]); 0: the display's
    kConfigurePlay,  // `settings`: some play settings (Note [Play settings])
  };
  Kind kind = Kind::kTogglePause;
  uint64_t seed = 0;
  std::string name;
  nlohmann::json settings;
  double value = 0.0;

  static InferenceCommand toggle_pause() { return {Kind::kTogglePause, 0, {}, {}}; }
  static InferenceCommand single_step() { return {Kind::kSingleStep, 0, {}, {}}; }
  static InferenceCommand reset(uint64_t seed) { return {Kind::kReset, seed, {}, {}}; }
  static InferenceCommand configure(nlohmann::json settings) {
    return {Kind::kConfigure, 0, {}, std::move(settings)};
  }
  static InferenceCommand switch_policy(std::string name, nlohmann::json settings) {
    return {Kind::kSwitchPolicy, 0, std::move(name), std::move(settings)};
  }
  static InferenceCommand reclassify() { return {Kind::kReclassify, 0, {}, {}}; }
  static InferenceCommand start_recording(std::string dir) {
    return {Kind::kStartRecording, 0, std::move(dir), {}};
  }
  static InferenceCommand stop_recording() { return {Kind::kStopRecording, 0, {}, {}}; }
  static InferenceCommand set_frame_rate(double frames_per_second) {
    return {Kind::kSetFrameRate, 0, {}, {}, frames_per_second};
  }
  static InferenceCommand configure_play(nlohmann::json settings) {
    return {Kind::kConfigurePlay, 0, {}, std::move(settings)};
  }
};

}  // namespace wc::ui
