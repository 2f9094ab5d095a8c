// A wc_session: a FrameSource (the world-model Session or the reference game) behind two locks,
// so frames, stats and actions flow without waiting for a model step. See Note [Session locks]
// in plugin_session.cpp.
#pragma once

#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "engine/attention/attention_policy.h"
#include "engine/rollout/frame_source.h"
#include "engine/rollout/session.h"
#include "plugin/src/cuda_frames.h"
#include "plugin/src/frame_slots.h"
#include "plugin/src/plugin_error.h"
#include "plugin/src/runtime.h"
#include "plugin/src/vulkan_frame_ring.h"
#include "worldcast/worldcast.h"

namespace wc::plugin {

class PluginSession final : public ErrorSink {
 public:
  // `desc` is a full-size copy. Throws PluginError / wc::Error (BAD_CHECKPOINT by default).
  PluginSession(std::shared_ptr<Runtime> runtime, const wc_session_desc& desc);
  ~PluginSession() override;

  Runtime& runtime() const { return *runtime_; }
  const std::shared_ptr<Runtime>& runtime_ptr() const { return runtime_; }

  // ErrorSink
  void set_last_error(const std::string& message) override;
  std::string last_error() const;

  wc_session_info info() const;
  void push_action(int32_t action);
  void step(uint32_t flags);
  void reset(uint64_t seed);
  wc_result get_frame(const wc_frame_request& request, wc_frame& frame);
  void release_frame(uint64_t token);
  void export_vulkan(wc_vulkan_export& out);
  wc_result get_stats(wc_stats& stats) const;
  void set_settings(const std::string& json);
  std::string settings() const;
  // Note [Play settings]: a token model's, live from the next block.
  void set_play_settings(const std::string& json);
  std::string play_settings() const;
  void set_policy(const std::string& name, const std::string& json);
  void save_state(const std::string& path);
  void load_state(const std::string& path);

 private:
  struct Snapshot {
    wc_stats stats{};  // scalars only
    std::vector<uint8_t> head_types;
    std::vector<float> head_scores;
    std::string settings = "{}";
    std::string play = "{}";
  };

  rollout::Session& model() const;  // throws UNSUPPORTED for the game source
  // Copies the current frame and stats for readers; `restart` after reset/load. Call with
  // work_mutex_ held.
  void publish(bool restart, double step_ms);
  // Stats and settings as readers will see them. Call with work_mutex_ held.
  Snapshot take_snapshot(double step_ms) const;
  // Replaces the snapshot after a settings or policy change (no new frame).
  void refresh_snapshot();
  nlohmann::json parse_settings(const std::string& json,
                                const char* what = "policy settings") const;
  // A live change through the C ABI: `json` parsed as `what` (an object), `change` applied to
  // the Session under the work lock (a wc::Error is INVALID_ARGUMENT and changes nothing), then
  // the snapshot refreshed.
  void change_live(const std::string& json, const char* what,
                   const std::function<void(rollout::Session&, const nlohmann::json&)>& change);
  // Validates a policy name and settings by creating a throwaway policy; returns its canonical
  // name ("combined" -> "headcast+tempcache").
  std::string check_settings(const std::string& policy, const nlohmann::json& settings) const;

  std::shared_ptr<Runtime> runtime_;
  int32_t source_ = WC_SOURCE_MODEL;
  std::unique_ptr<FrameSource> frames_;
  rollout::Session* model_ = nullptr;  // frames_ when it is the model, else nullptr
  attention::ModelShape shape_;        // what a policy of this session is created for
  int width_ = 0;
  int height_ = 0;
  int frames_per_block_ = 1;
  int num_actions_ = game::kActionCount;

  // Note [Session locks]
  std::mutex work_mutex_;
  mutable std::mutex state_mutex_;
  std::string policy_name_;  // written under both locks
  std::deque<int32_t> actions_;
  std::vector<uint8_t> latest_;  // RGBA8 of the newest frame
  uint64_t latest_index_ = 0;
  bool latest_delivered_ = false;  // returned by a get (or a first frame: see publish)
  uint64_t dropped_since_get_ = 0;
  uint64_t frames_dropped_ = 0;
  Snapshot snapshot_;
  std::string last_error_;
  FrameSlots vulkan_slots_{3, 1};
  FrameSlots cuda_slots_{3, 2};
  std::unique_ptr<VulkanFrameRing> vulkan_ring_;
  std::unique_ptr<CudaFrameRing> cuda_ring_;
};

}  // namespace wc::plugin
