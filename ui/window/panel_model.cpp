// See panel_model.h.
#include "ui/window/panel_model.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>

#include "engine/attention/headcast/head_type.h"

namespace wc::ui {
namespace {

constexpr size_t kFpsSamples = 32;
constexpr int kMaxWindowBlocks = 64;
constexpr int kMaxBudgetFrames = 64;

bool has(const nlohmann::json& settings, const char* key) {
  return settings.is_object() && settings.contains(key) && settings[key].is_number();
}

double number(const nlohmann::json& settings, const char* key) {
  return settings[key].get<double>();
}

}  // namespace

std::string fresh_record_dir(const std::string& base) {
  for (int n = 0;; ++n) {
    char name[40];
    std::snprintf(name, sizeof(name), "worldcast_record_%03d", n);
    const std::filesystem::path dir = std::filesystem::path(base) / name;
    std::error_code error;
    if (!std::filesystem::exists(dir, error)) return dir.string();
  }
}

PanelModel::PanelModel(uint64_t reset_seed, std::string record_base, size_t history)
    : reset_seed_(reset_seed),
      record_base_(std::move(record_base)),
      frame_times_(history),
      present_times_(history),
      produce_times_(history),
      model_times_(history),
      decode_times_(history),
      cache_mb_(attention::kHeadTypeCount, FrameTimeHistory(history)) {}

void PanelModel::observe(const LiveStats& stats) {
  if (stats.has_policy) {
    current_policy_ = stats.policy;
    settings_by_policy_[stats.policy] = stats.settings;
  }
  if (stats.frames_produced == last_produced_) return;
  last_produced_ = stats.frames_produced;
  produced_at_.emplace_back(clock_ms_, stats.frames_produced);
  if (produced_at_.size() > kFpsSamples) produced_at_.erase(produced_at_.begin());
  produce_times_.push(static_cast<float>(stats.produce_ms));
  if (!stats.has_policy) return;
  model_times_.push(static_cast<float>(stats.run.model_ms));
  decode_times_.push(static_cast<float>(stats.run.decode_ms));
  for (int t = 0; t < attention::kHeadTypeCount; ++t) {
    const auto bytes = stats.run.policy.per_type[static_cast<size_t>(t)].cached_bytes;
    cache_mb_[static_cast<size_t>(t)].push(static_cast<float>(static_cast<double>(bytes) / 1e6));
  }
}

void PanelModel::observe_frame(double frame_ms, double present_ms) {
  clock_ms_ += frame_ms;
  frame_times_.push(static_cast<float>(frame_ms));
  present_times_.push(static_cast<float>(present_ms));
}

const FrameTimeHistory& PanelModel::cache_history(attention::HeadType type) const {
  return cache_mb_[static_cast<size_t>(type)];
}

float PanelModel::cache_history_max() const {
  float most = 0.0f;
  for (const FrameTimeHistory& history : cache_mb_) most = std::max(most, history.max());
  return most;
}

double PanelModel::generated_fps() const {
  if (produced_at_.size() < 2) return 0.0;
  const auto& [t0, n0] = produced_at_.front();
  const auto& [t1, n1] = produced_at_.back();
  return t1 > t0 ? 1000.0 * static_cast<double>(n1 - n0) / (t1 - t0) : 0.0;
}

std::vector<SliderSpec> PanelModel::sliders(const LiveStats& stats) {
  std::vector<SliderSpec> out;
  if (!stats.has_policy) return out;
  const nlohmann::json& s = stats.settings;
  const PolicyGeometry& g = stats.geometry;
  const int grid = std::max({g.grid_h, g.grid_w, 1});
  const int frames = std::max(g.frames_per_block, 1);
  const auto add = [&](SliderSpec spec, const char* value_key) {
    spec.value = number(s, value_key) / spec.scale;
    out.push_back(std::move(spec));
  };
  std::vector<std::string> thetas;
  for (const char* key : {"theta_dummy", "theta_sink", "theta_spatial"}) {
    if (has(s, key)) thetas.emplace_back(key);
  }
  if (!thetas.empty()) {
    add({"theta", thetas,
         "cast threshold theta_d = theta_s = theta_sp: a head becomes Dummy, Sink or Spatial "
         "when its score reaches it (re-casts live from the stored scores)",
         false, 0.0, 1.0, 1.0, 0.0},
        has(s, "theta_sink") ? "theta_sink" : thetas.front().c_str());
  }
  if (has(s, "theta_spatial_score")) {
    add({"theta_sc",
         {"theta_spatial_score"},
         "Spatial also needs S_sp = P5(cos) - gamma * e >= theta_sc (the worst token's cos "
         "in place of P5 with worst_token)",
         false,
         -1.0,
         1.0,
         1.0,
         0.0},
        "theta_spatial_score");
  }
  if (has(s, "gamma")) {
    add({"gamma", {"gamma"}, "weight of the relative error in S_sp", false, 0.0, 20.0, 1.0, 0.0},
        "gamma");
  }
  if (has(s, "radius")) {
    add({"r",
         {"radius"},
         "classification's spatial neighbourhood (tokens)",
         true,
         0.0,
         std::max(1.0, grid / 2.0),
         1.0,
         0.0},
        "radius");
  }
  if (has(s, "cell")) {
    add({"cell",
         {"cell"},
         "edge of a Spatial head's attention cell (tokens)",
         true,
         1.0,
         static_cast<double>(grid),
         1.0,
         0.0},
        "cell");
  }
  if (has(s, "window")) {
    add({"window",
         {"window"},
         "blocks of history kept, sink block included (0 = all)",
         true,
         0.0,
         kMaxWindowBlocks,
         static_cast<double>(frames),
         0.0},
        "window");
  }
  if (has(s, "tau")) {
    add({"tau",
         {"tau"},
         "TempCache merges a key into its match when cosine >= tau",
         false,
         0.0,
         1.0,
         1.0,
         0.0},
        "tau");
  }
  if (has(s, "budget")) {
    const double tokens_per_frame = std::max(1, g.grid_h * g.grid_w);
    add({"budget",
         {"budget"},
         "TempCache entries per head, in frames of tokens (0 = none)",
         true,
         0.0,
         kMaxBudgetFrames,
         tokens_per_frame,
         0.0},
        "budget");
  }
  // AnnSA (annsa, fast-ar; Note [AnnSA tiles]).
  if (has(s, "ann_bits")) {
    add({"ann bits",
         {"ann_bits"},
         "AnnSA: random-projection sign bits per head, 2^bits buckets (more bits, fewer history "
         "keys per query)",
         true,
         1.0,
         10.0,
         1.0,
         0.0},
        "ann_bits");
  }
  if (has(s, "ann_radius")) {
    add({"ann r",
         {"ann_radius"},
         "AnnSA: a query also attends to the buckets within this Hamming distance of its own "
         "(at most ann bits)",
         true,
         0.0,
         4.0,
         1.0,
         0.0},
        "ann_radius");
  }
  if (has(s, "ann_tile")) {
    add({"ann tile",
         {"ann_tile"},
         "AnnSA: queries per tile; a tile attends to the union of its queries' buckets",
         true,
         16.0,
         1024.0,
         1.0,
         0.0},
        "ann_tile");
  }
  return out;
}

void PanelModel::toggle_pause() {
  commands_.push_back(InferenceCommand::toggle_pause());
}
void PanelModel::set_frame_rate(double frames_per_second) {
  commands_.push_back(InferenceCommand::set_frame_rate(std::clamp(frames_per_second, 0.0, 240.0)));
}
void PanelModel::single_step() {
  commands_.push_back(InferenceCommand::single_step());
}
void PanelModel::reset() {
  commands_.push_back(InferenceCommand::reset(reset_seed_));
}

void PanelModel::set_slider(const SliderSpec& slider, double value) {
  value = std::clamp(value, slider.min, slider.max);
  nlohmann::json settings = nlohmann::json::object();
  for (const std::string& key : slider.keys) {
    if (slider.integer) {
      settings[key] = static_cast<int64_t>(std::llround(value * slider.scale));
    } else {
      settings[key] = value * slider.scale;
    }
  }
  configure(std::move(settings));
}

std::optional<PanelModel::TypeCounts> PanelModel::cast_preview(const LiveStats& stats,
                                                               const SliderSpec& slider,
                                                               double value) {
  if (slider.label != "theta" && slider.label != "theta_sc") return std::nullopt;
  const attention::PolicyStats& policy = stats.run.policy;
  if (!stats.has_policy || !policy.classified || policy.heads.empty()) return std::nullopt;
  const nlohmann::json& s = stats.settings;
  attention::CastThresholds t;  // a threshold the settings do not carry stays at its default
  const auto read = [&](const char* key, double& value) {
    if (has(s, key)) value = number(s, key);
  };
  read("theta_dummy", t.theta_dummy);
  read("theta_sink", t.theta_sink);
  read("theta_spatial", t.theta_spatial);
  read("theta_spatial_score", t.theta_spatial_score);
  const double setting = std::clamp(value, slider.min, slider.max) * slider.scale;
  for (const std::string& key : slider.keys) {
    if (key == "theta_dummy") t.theta_dummy = setting;
    if (key == "theta_sink") t.theta_sink = setting;
    if (key == "theta_spatial") t.theta_spatial = setting;
    if (key == "theta_spatial_score") t.theta_spatial_score = setting;
  }
  TypeCounts counts{};
  for (const auto& layer : policy.heads) {
    for (const attention::HeadStats& head : layer) {
      // A head without scores (cast before scoring, or forced) keeps its type.
      const attention::HeadType type =
          std::isnan(head.scores.sink) ? head.type : attention::cast_from_scores(head.scores, t);
      ++counts[static_cast<size_t>(type)];
    }
  }
  return counts;
}

void PanelModel::hold_slider(const SliderSpec& slider, double value) {
  held_[slider.label] = std::clamp(value, slider.min, slider.max);
}

std::optional<double> PanelModel::held_value(const SliderSpec& slider) const {
  const auto it = held_.find(slider.label);
  if (it == held_.end()) return std::nullopt;
  return it->second;
}

void PanelModel::release_slider(const SliderSpec& slider) {
  const auto it = held_.find(slider.label);
  if (it == held_.end()) return;
  const double value = it->second;
  held_.erase(it);
  set_slider(slider, value);
}

void PanelModel::configure(nlohmann::json settings) {
  commands_.push_back(InferenceCommand::configure(std::move(settings)));
}

void PanelModel::select_policy(const std::string& name) {
  if (name == current_policy_) return;
  const auto it = settings_by_policy_.find(name);
  commands_.push_back(InferenceCommand::switch_policy(
      name, it != settings_by_policy_.end() ? it->second : nlohmann::json::object()));
}

void PanelModel::reclassify() {
  commands_.push_back(InferenceCommand::reclassify());
}

void PanelModel::set_worst_token(bool on) {
  configure({{"worst_token", on}});
}

void PanelModel::configure_play(nlohmann::json settings) {
  commands_.push_back(InferenceCommand::configure_play(std::move(settings)));
}

void PanelModel::toggle_recording(bool recording_now) {
  commands_.push_back(recording_now
                          ? InferenceCommand::stop_recording()
                          : InferenceCommand::start_recording(fresh_record_dir(record_base_)));
}

std::vector<InferenceCommand> PanelModel::take_commands() {
  std::vector<InferenceCommand> out;
  out.swap(commands_);
  return out;
}

}  // namespace wc::ui
