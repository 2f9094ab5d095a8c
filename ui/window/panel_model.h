// The panel's state and logic without ImGui: histories fed by the inference thread's snapshots,
// the sliders the running policy's settings() keys call for, and the user's intents turned into
// inference commands. panel.cpp only draws it, so tests drive the very same paths headless.
#pragma once

#include <array>
#include <cstdint>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "engine/attention/headcast/head_type.h"
#include "ui/inference/inference_command.h"
#include "ui/inference/live_stats.h"
#include "ui/window/frame_time_history.h"

namespace wc::ui {

// One slider, mapped onto settings keys of the running policy.
struct SliderSpec {
  // "theta", "theta_sc", "gamma", "r", "cell", "window", "tau", "budget", "ann bits", "ann r",
  // "ann tile" (ASCII: ImGui's built-in font has no Greek).
  std::string label;
  std::vector<std::string> keys;  // the settings keys it writes (theta writes all three)
  std::string help;               // tooltip
  bool integer = false;
  double min = 0.0;
  double max = 1.0;
  double scale = 1.0;  // settings value = slider value x scale (window in blocks, budget in frames)
  double value = 0.0;  // current, in slider units
};

class PanelModel {
 public:
  // `reset_seed`: what Reset starts over from; `record_base`: where Record makes its folders.
  PanelModel(uint64_t reset_seed, std::string record_base, size_t history = 240);

  // Render thread, once per rendered frame: the newest snapshot (samples are taken once per
  // generated frame) and this frame's display time and present cost.
  void observe(const LiveStats& stats);
  void observe_frame(double frame_ms, double present_ms);

  const FrameTimeHistory& frame_times() const { return frame_times_; }      // display
  const FrameTimeHistory& produce_times() const { return produce_times_; }  // per generated frame
  const FrameTimeHistory& model_times() const { return model_times_; }
  const FrameTimeHistory& decode_times() const { return decode_times_; }
  const FrameTimeHistory& present_times() const { return present_times_; }
  // Cache size per head type over the last generated frames, in MB.
  const FrameTimeHistory& cache_history(attention::HeadType type) const;
  float cache_history_max() const;
  // Generated frames per second over the recent samples (0 before two samples).
  double generated_fps() const;

  // The sliders for the running policy (keys it does not have get none).
  static std::vector<SliderSpec> sliders(const LiveStats& stats);

  // Note [Cast preview]
  // A cast threshold (theta, theta_sc) re-casts every head from its stored scores, which moves
  // heads between stores and refills them. So while one is dragged the panel shows what the cast
  // would be, cast_preview counting the heads of each type from the scores the panel holds with
  // the same rule the policy applies (attention::cast_from_scores), and sends the value only
  // when the slider is let go: one re-cast per decision, the counts seen before it lands.
  // nullopt for another slider, or before the policy has cast its heads.
  using TypeCounts = std::array<int, attention::kHeadTypeCount>;
  static std::optional<TypeCounts> cast_preview(const LiveStats& stats, const SliderSpec& slider,
                                                double value);
  // The value a threshold slider is held at while dragged (Note [Cast preview]).
  void hold_slider(const SliderSpec& slider, double value);
  std::optional<double> held_value(const SliderSpec& slider) const;
  // Sends the held value (set_slider) and lets it go; nothing when none is held.
  void release_slider(const SliderSpec& slider);

  // Intents: the panel's widgets, the keys and the tests all call these.
  void toggle_pause();
  void set_frame_rate(double frames_per_second);
  void single_step();
  void reset();
  void set_slider(const SliderSpec& slider, double value);
  void configure(nlohmann::json settings);
  // Switches the running game to `name`, with the settings it last ran with in this session
  // (its defaults the first time).
  void select_policy(const std::string& name);
  void reclassify();
  // Note [Worst-token scores]: the running cast's scoring, re-cast live from the stored scores.
  void set_worst_token(bool on);
  // Note [Play settings]: some play settings, from the next block on.
  void configure_play(nlohmann::json settings);
  // Starts a recording into a fresh folder under the record base, or stops the running one.
  void toggle_recording(bool recording_now);

  // What to send to the inference thread, in order; empties the list.
  std::vector<InferenceCommand> take_commands();

 private:
  uint64_t reset_seed_;
  std::string record_base_;
  FrameTimeHistory frame_times_;
  FrameTimeHistory present_times_;
  FrameTimeHistory produce_times_;
  FrameTimeHistory model_times_;
  FrameTimeHistory decode_times_;
  std::vector<FrameTimeHistory> cache_mb_;  // one ring per head type
  // (render clock ms, frames produced) when new frames were seen, for generated_fps().
  std::vector<std::pair<double, uint64_t>> produced_at_;
  double clock_ms_ = 0.0;
  uint64_t last_produced_ = UINT64_MAX;
  std::string current_policy_;
  std::map<std::string, nlohmann::json> settings_by_policy_;
  std::map<std::string, double> held_;  // slider label -> value while dragged
  std::vector<InferenceCommand> commands_;
};

// A fresh folder name under `base`: base/worldcast_record_NNN (the first that does not exist).
std::string fresh_record_dir(const std::string& base);

}  // namespace wc::ui
