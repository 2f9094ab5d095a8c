// The world-model smoke script; see player_script.h.
#define GLFW_INCLUDE_NONE  // key codes only: no OpenGL headers (absent on the GPU machine)
#include <GLFW/glfw3.h>

#include <algorithm>
#include <cmath>
#include <vector>

#include "engine/core/timing.h"
#include "ui/window/player_script.h"

namespace wc::ui {
namespace {

constexpr double kTheta = 0.5;
constexpr double kTimeoutMs = 420000.0;  // generous: a loaded 2-core CI machine

bool theta_is(const LiveStats& stats, double value) {
  return stats.settings.is_object() && stats.settings.contains("theta_sink") &&
         std::abs(stats.settings["theta_sink"].get<double>() - value) < 1e-6;
}

// The median S_dummy over the cast heads (kTheta when none has a score).
double median_dummy_score(const LiveStats& stats) {
  std::vector<double> scores;
  for (const auto& layer : stats.run.policy.heads) {
    for (const auto& head : layer) {
      if (!std::isnan(head.scores.dummy)) scores.push_back(head.scores.dummy);
    }
  }
  if (scores.empty()) return kTheta;
  std::sort(scores.begin(), scores.end());
  // Rounded to the slider's float precision, so the value read back compares equal.
  return static_cast<double>(static_cast<float>(scores[scores.size() / 2]));
}

class ModelSmokeScript final : public PlayerScript {
 public:
  explicit ModelSmokeScript(int min_frames) : min_frames_(min_frames) {}

  void on_frame(const ScriptFrame& f) override {
    if (stage_ >= kDone) return;
    if (clock_.elapsed_ms() > kTimeoutMs) {
      timed_out_ = true;
      f.input->on_key(GLFW_KEY_ESCAPE, GLFW_PRESS);
      return;
    }
    if (!f.stats) return;
    const LiveStats& s = *f.stats;
    const uint64_t produced = s.frames_produced;
    auto press = [&](int key) { f.input->on_key(key, GLFW_PRESS); };
    auto release = [&](int key) { f.input->on_key(key, GLFW_RELEASE); };
    switch (stage_) {
      case kStart:
        if (f.frames_rendered >= 2) {
          press(GLFW_KEY_D);
          stage_ = kRight;
        }
        break;
      case kRight:
        if (produced >= 3) {
          release(GLFW_KEY_D);
          press(GLFW_KEY_UP);
          stage_ = kUp;
        }
        break;
      case kUp:
        if (produced >= 5) {
          release(GLFW_KEY_UP);
          stage_ = kWaitCast;
        }
        break;
      case kWaitCast:
        if (s.policy == "headcast" && s.run.policy.classified) {
          for (const SliderSpec& slider : PanelModel::sliders(s)) {
            if (slider.label == "theta") f.panel->set_slider(slider, kTheta);
          }
          stage_ = kWaitTheta;
        }
        break;
      case kWaitTheta:
        if (theta_is(s, kTheta)) {
          f.panel->select_policy("tempcache");
          stage_ = kWaitTempCache;
        }
        break;
      case kWaitTempCache:
        if (s.policy == "tempcache") {
          if (switched_at_ == 0) switched_at_ = produced;
          if (produced > switched_at_) {  // a frame was generated through tempcache
            f.panel->select_policy("headcast");
            stage_ = kWaitHeadCastAgain;
          }
        }
        break;
      case kWaitHeadCastAgain:
        if (s.policy == "headcast" && theta_is(s, kTheta) && s.run.policy.classified) {
          press(GLFW_KEY_P);
          release(GLFW_KEY_P);
          stage_ = kWaitPaused;
        }
        break;
      case kWaitPaused:
        if (s.paused) {
          stepped_from_ = produced;
          press(GLFW_KEY_N);
          release(GLFW_KEY_N);
          stage_ = kWaitStep;
        }
        break;
      case kWaitStep:
        if (produced == stepped_from_ + 1) {
          press(GLFW_KEY_P);
          release(GLFW_KEY_P);
          stage_ = kWaitResumed;
        }
        break;
      case kWaitResumed:
        if (!s.paused) {
          press(GLFW_KEY_F9);  // record
          release(GLFW_KEY_F9);
          stage_ = kWaitRecording;
        }
        break;
      case kWaitRecording:
        if (s.recording && s.recorded_frames >= 1) {
          press(GLFW_KEY_F9);  // stop
          release(GLFW_KEY_F9);
          stage_ = kWaitRecorded;
        }
        break;
      case kWaitRecorded:
        if (!s.recording) {
          // theta at the median S_dummy: about half the heads Dummy, the rest cast by their
          // other scores, so the screenshot shows a mixed head map.
          final_theta_ = median_dummy_score(s);
          for (const SliderSpec& slider : PanelModel::sliders(s)) {
            if (slider.label == "theta") f.panel->set_slider(slider, final_theta_);
          }
          stage_ = kWaitMixed;
        }
        break;
      case kWaitMixed:
        // A few frames after the new cast arrived: auto-sized panels follow their content a
        // frame late.
        if (mixed_at_ < 0 && theta_is(s, final_theta_)) mixed_at_ = f.frames_rendered;
        if (mixed_at_ >= 0 && f.frames_rendered >= mixed_at_ + 3 &&
            f.frames_rendered >= min_frames_) {
          press(GLFW_KEY_F12);
          release(GLFW_KEY_F12);
          stage_ = kQuit;
        }
        break;
      case kQuit:
        press(GLFW_KEY_ESCAPE);
        stage_ = kDone;
        break;
      case kDone:
        break;
    }
  }

  std::vector<std::string> failures(const LiveStats* s) const override {
    std::vector<std::string> out;
    if (timed_out_) out.push_back("timed out");
    if (stage_ != kDone) out.push_back("stopped at stage " + std::to_string(stage_));
    if (!s) {
      out.push_back("no snapshot from the inference thread");
      return out;
    }
    if (s->action_counts[static_cast<size_t>(Action::kRight)] == 0) {
      out.push_back("no generated frame consumed 'right'");
    }
    if (s->action_counts[static_cast<size_t>(Action::kUp)] == 0) {
      out.push_back("no generated frame consumed 'up'");
    }
    if (s->policy != "headcast" || !theta_is(*s, final_theta_)) {
      out.push_back("final policy is " + s->policy + " " + s->settings.dump() +
                    ", expected headcast with theta " + std::to_string(final_theta_));
    }
    if (!s->error.empty()) out.push_back("the inference thread reported: " + s->error);
    if (s->record_note.find("recorded") == std::string::npos) {
      out.push_back("no recording was finished: '" + s->record_note + "'");
    }
    return out;
  }

 private:
  enum Stage {
    kStart,
    kRight,
    kUp,
    kWaitCast,
    kWaitTheta,
    kWaitTempCache,
    kWaitHeadCastAgain,
    kWaitPaused,
    kWaitStep,
    kWaitResumed,
    kWaitRecording,
    kWaitRecorded,
    kWaitMixed,
    kQuit,
    kDone
  };
  const int min_frames_;
  Stage stage_ = kStart;
  uint64_t switched_at_ = 0;
  uint64_t stepped_from_ = 0;
  double final_theta_ = kTheta;
  int mixed_at_ = -1;
  bool timed_out_ = false;
  Stopwatch clock_;
};

}  // namespace

std::unique_ptr<PlayerScript> make_model_smoke_script(int min_frames) {
  return std::make_unique<ModelSmokeScript>(min_frames);
}

}  // namespace wc::ui
