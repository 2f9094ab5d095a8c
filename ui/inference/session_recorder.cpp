// See session_recorder.h and Note [Replayable recordings].
#include "ui/inference/session_recorder.h"

#include <cstdio>
#include <filesystem>

#include "engine/core/atomic_file.h"
#include "engine/core/error.h"
#include "engine/core/log.h"
#include "engine/game/action_script.h"
#include "ui/frames/screenshot.h"

namespace wc::ui {

std::string recorded_frame_name(uint64_t frame_index) {
  char name[32];
  std::snprintf(name, sizeof(name), "frame_%05llu.png",
                static_cast<unsigned long long>(frame_index - 1));
  return name;
}

SessionRecorder::SessionRecorder(std::string dir, nlohmann::json meta)
    : dir_(std::move(dir)), meta_(std::move(meta)) {
  if (dir_.empty()) throw Error("record", "no folder given");
  std::error_code error;
  std::filesystem::create_directories(dir_, error);
  if (error) throw Error(dir_, "cannot create folder: " + error.message());
  if (std::filesystem::exists(std::filesystem::path(dir_) / "record.json")) {
    throw Error(dir_, "already holds a recording (record.json); choose another folder");
  }
}

SessionRecorder::~SessionRecorder() {
  if (!finished_ && frames_ > 0) {
    log_warning("record: ", dir_, " was not finished; its actions.txt is missing");
  }
}

void SessionRecorder::add_frame(const uint8_t* rgba, int width, int height, uint64_t frame_index) {
  if (frame_index == 0) throw Error("record", "frame 0 (the reset frame) is not a generated frame");
  write_png((std::filesystem::path(dir_) / recorded_frame_name(frame_index)).string(), width,
            height, rgba);
  if (frames_ == 0) first_frame_ = frame_index;
  last_frame_ = frame_index;
  ++frames_;
}

void SessionRecorder::note_change(uint64_t frame_index, const std::string& what) {
  changes_.push_back({{"after_frame", frame_index}, {"what", what}});
}

void SessionRecorder::finish(const std::vector<Action>& actions_since_reset,
                             const std::string& reason) {
  if (finished_) return;
  finished_ = true;
  const std::filesystem::path dir(dir_);
  write_file_atomically((dir / "actions.txt").string(),
                        "# worldcast recording: one action per generated frame since the reset\n" +
                            game::format_action_script(actions_since_reset));
  nlohmann::json record = meta_;
  record["frames_recorded"] = frames_;
  record["first_file"] = frames_ > 0 ? recorded_frame_name(first_frame_) : "";
  record["last_file"] = frames_ > 0 ? recorded_frame_name(last_frame_) : "";
  record["actions_file"] = "actions.txt";
  record["actions"] = actions_since_reset.size();
  record["changes"] = changes_;
  record["ended"] = reason;
  record["replayable"] = changes_.empty();
  if (meta_.contains("command") && meta_["command"].is_string()) {
    // The command that rebuilds the source, with the policy and the play settings the recording
    // started with.
    std::string replay = meta_["command"].get<std::string>();
    if (meta_.contains("policy")) {
      replay += " --policy " + meta_["policy"].get<std::string>() + " --policy-settings '" +
                meta_.value("policy_settings", nlohmann::json::object()).dump() + "'";
    }
    const nlohmann::json play = meta_.value("play_settings", nlohmann::json::object());
    if (play.is_object() && !play.empty()) replay += " --play-settings '" + play.dump() + "'";
    replay += " --headless --seed " + std::to_string(meta_.value("seed", uint64_t{0})) +
              " --actions " + (dir / "actions.txt").string() + " --frames " +
              std::to_string(actions_since_reset.size()) + " --out " + (dir / "replay").string();
    record["replay_command"] = replay;
  }
  write_file_atomically((dir / "record.json").string(), record.dump(2) + "\n");
  log_info("record: ", frames_, " frames and actions.txt in ", dir_, " (", reason, ")");
}

}  // namespace wc::ui
