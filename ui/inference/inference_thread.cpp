// See inference_thread.h.
#include "ui/inference/inference_thread.h"

#include <algorithm>
#include <chrono>
#include <exception>
#include <utility>

#include "engine/core/error.h"
#include "engine/core/log.h"
#include "engine/core/timing.h"
#include "engine/game/action.h"
#include "ui/inference/session_recorder.h"

namespace wc::ui {

InferenceThread::InferenceThread(FrameSource& source, FrameSink& sink, PolicyControl* control,
                                 InferenceOptions options)
    : source_(source),
      sink_(sink),
      control_(control),
      options_(std::move(options)),
      pacer_(options_.frame_rate) {
  if (source.width() != sink.width() || source.height() != sink.height()) {
    throw Error("inference thread",
                "source " + source.name() + " is " + std::to_string(source.width()) + "x" +
                    std::to_string(source.height()) + " but the frame sink is " +
                    std::to_string(sink.width()) + "x" + std::to_string(sink.height()));
  }
  source_name_ = source.name();
  if (control_) {
    policy_names_ = control_->policy_names();
    geometry_ = control_->geometry();
  }
  paused_ = options_.start_paused;
  seed_ = options_.seed;
}

InferenceThread::~InferenceThread() {
  stop();
}

void InferenceThread::start() {
  if (thread_.joinable()) throw Error("inference thread", "already started");
  thread_ = std::thread([this] { run(); });
}

void InferenceThread::stop() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stop_ = true;
  }
  wake_.notify_all();
  if (thread_.joinable()) thread_.join();
}

void InferenceThread::send(InferenceCommand command) {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    queue_.push_back(std::move(command));
  }
  wake_.notify_one();
}

void InferenceThread::frame_presented() {
  const double now_s =
      std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
  {
    std::lock_guard<std::mutex> lock(mutex_);
    const int64_t earned = pacer_.on_presented(now_s);
    if (earned == 0 || credits_ >= kMaxCredits) return;
    credits_ = static_cast<int>(std::min<int64_t>(kMaxCredits, credits_ + earned));
  }
  wake_.notify_one();
}

bool InferenceThread::wait_for(const std::function<bool(const LiveStats&)>& ready,
                               double timeout_s) const {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(timeout_s);
  std::unique_lock<std::mutex> lock(stats_wait_mutex_);
  while (true) {
    const std::shared_ptr<const LiveStats> stats = stats_.latest();
    if (stats && ready(*stats)) return true;
    if (stats_published_.wait_until(lock, deadline) == std::cv_status::timeout) {
      const std::shared_ptr<const LiveStats> last = stats_.latest();
      return last && ready(*last);
    }
  }
}

bool InferenceThread::ready_to_produce() const {
  if (failed_) return false;
  if (step_pending_) return true;
  return !paused_ && (!options_.paced || credits_ > 0);
}

void InferenceThread::run() {
  reset_source(seed_);
  publish_stats();
  while (true) {
    std::deque<InferenceCommand> commands;
    {
      std::unique_lock<std::mutex> lock(mutex_);
      wake_.wait(lock, [&] { return stop_ || !queue_.empty() || ready_to_produce(); });
      if (stop_) break;
      commands.swap(queue_);
      // A credit pays for the frame produced below; commands go first and re-check.
      if (commands.empty() && !step_pending_ && options_.paced) --credits_;
    }
    if (!commands.empty()) {
      apply(commands);
      publish_stats();
      continue;
    }
    produce();
    publish_stats();
  }
  stop_recording("viewer closed");
  publish_stats();
}

void InferenceThread::apply(std::deque<InferenceCommand>& commands) {
  command_frame_ = source_.frame_index();
  while (!commands.empty()) {
    InferenceCommand command = std::move(commands.front());
    commands.pop_front();
    // Slider drags send a configure per display frame: one merged call per block is enough.
    while (command.kind == InferenceCommand::Kind::kConfigure && !commands.empty() &&
           commands.front().kind == InferenceCommand::Kind::kConfigure) {
      command.settings.update(commands.front().settings);
      commands.pop_front();
      ++commands_applied_;
    }
    ++commands_applied_;
    try {
      apply_one(command);
    } catch (const std::exception& error) {
      error_ = error.what();
      log_warning("viewer command rejected: ", error_);
    }
  }
}

void InferenceThread::apply_one(const InferenceCommand& command) {
  using Kind = InferenceCommand::Kind;
  const auto need_policy = [&](const char* what) {
    if (!control_) throw Error(source_name_, std::string(what) + ": this source has no policy");
  };
  switch (command.kind) {
    case Kind::kTogglePause:
      paused_ = !paused_;
      break;
    case Kind::kSingleStep:
      if (paused_) step_pending_ = true;
      break;
    case Kind::kReset:
      stop_recording("reset");
      seed_ = command.seed;
      reset_source(seed_);
      break;
    case Kind::kConfigure:
      need_policy("configure");
      control_->configure(command.settings);
      error_.clear();
      if (recorder_)
        recorder_->note_change(source_.frame_index(), "configure " + command.settings.dump());
      break;
    case Kind::kSwitchPolicy:
      need_policy("switch policy");
      control_->switch_policy(command.name, command.settings);
      error_.clear();
      if (recorder_) {
        recorder_->note_change(source_.frame_index(),
                               "switch to " + command.name + " " + command.settings.dump());
      }
      break;
    case Kind::kReclassify:
      need_policy("reclassify");
      control_->reclassify();
      if (recorder_) recorder_->note_change(source_.frame_index(), "reclassify");
      break;
    case Kind::kConfigurePlay:
      need_policy("play settings");
      control_->configure_play(command.settings);
      error_.clear();
      if (recorder_)
        recorder_->note_change(source_.frame_index(), "play " + command.settings.dump());
      break;
    case Kind::kStartRecording:
      start_recording(command.name);
      break;
    case Kind::kStopRecording:
      stop_recording("stopped");
      break;
    case Kind::kSetFrameRate: {
      FramePacer pacer(command.value);  // throws for a bad rate, before anything changes
      std::lock_guard<std::mutex> lock(mutex_);
      pacer_ = pacer;
      break;
    }
  }
}

void InferenceThread::reset_source(uint64_t seed) {
  Stopwatch watch;
  actions_since_reset_.clear();
  try {
    source_.reset(seed);
    publish_frame(options_.route, source_, sink_);
    failed_ = false;
  } catch (const std::exception& error) {
    failed_ = true;
    error_ = std::string("reset failed: ") + error.what();
    log_error(error_);
  }
  produce_ms_ = watch.elapsed_ms();
}

void InferenceThread::produce() {
  const bool scripted = script_position_ < options_.script.size();
  const Action action = scripted ? options_.script[script_position_++] : actions_.take();
  step_pending_ = false;
  Stopwatch watch;
  try {
    source_.step(action);
    publish_frame(options_.route, source_, sink_);
  } catch (const std::exception& error) {
    failed_ = true;
    error_ = std::string("the source failed: ") + error.what();
    log_error(error_);
    return;
  }
  produce_ms_ = watch.elapsed_ms();
  last_action_ = action;
  ++action_counts_[static_cast<size_t>(action)];
  actions_since_reset_.push_back(action);
  ++frames_produced_;
  if (recorder_) {
    try {
      recorder_->add_frame(source_.rgba(), source_.width(), source_.height(),
                           source_.frame_index());
    } catch (const std::exception& error) {
      error_ = error.what();
      recorder_.reset();
      record_note_ = "recording stopped: " + error_;
    }
  }
}

void InferenceThread::start_recording(const std::string& dir) {
  stop_recording("a new recording started");
  nlohmann::json meta = options_.record_meta;
  meta["source"] = source_name_;
  meta["seed"] = seed_;
  meta["width"] = source_.width();
  meta["height"] = source_.height();
  meta["started_at_frame"] = source_.frame_index();
  if (control_) {
    meta["policy"] = control_->policy_name();
    meta["policy_settings"] = control_->policy_settings();
    // Live settings may have left the sampling other than the command line's choice.
    meta["play_settings"] = control_->play_settings();
  }
  recorder_ = std::make_unique<SessionRecorder>(dir, std::move(meta));
  record_note_.clear();
}

void InferenceThread::stop_recording(const std::string& reason) {
  if (!recorder_) return;
  try {
    recorder_->finish(actions_since_reset_, reason);
    record_note_ = "recorded " + std::to_string(recorder_->frames()) + " frames to " +
                   recorder_->dir() + " (" + reason + ")";
  } catch (const std::exception& error) {
    error_ = error.what();
    record_note_ = std::string("recording failed: ") + error.what();
  }
  recorder_.reset();
}

void InferenceThread::publish_stats() {
  auto stats = std::make_shared<LiveStats>();
  stats->source_name = source_name_;
  stats->frame_index = source_.frame_index();
  stats->frames_produced = frames_produced_;
  stats->action = last_action_;
  stats->action_counts = action_counts_;
  stats->paused = paused_;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stats->frame_rate = pacer_.frames_per_second();
  }
  stats->failed = failed_;
  stats->produce_ms = produce_ms_;
  stats->commands_applied = commands_applied_;
  stats->command_frame = command_frame_;
  stats->error = error_;
  if (control_) {
    stats->has_policy = true;
    stats->policy_names = policy_names_;
    stats->policy = control_->policy_name();
    stats->settings = control_->policy_settings();
    stats->geometry = geometry_;
    stats->run = control_->run_stats();
  }
  stats->recording = recorder_ != nullptr;
  if (recorder_) {
    stats->record_dir = recorder_->dir();
    stats->recorded_frames = recorder_->frames();
  }
  stats->record_note = record_note_;
  {
    // Taking the waiters' mutex orders the publish before their next check (no lost wake-up).
    std::lock_guard<std::mutex> lock(stats_wait_mutex_);
    stats_.publish(std::move(stats));
  }
  stats_published_.notify_all();
}

}  // namespace wc::ui
