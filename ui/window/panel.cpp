// The panel's widgets; see panel.h. Every interaction calls a PanelModel intent.
#include "ui/window/panel.h"

#include <imgui.h>

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "engine/game/action.h"
#include "ui/window/head_map.h"
#include "ui/window/series_plot.h"

namespace wc::ui {
namespace {

using attention::HeadType;

void draw_timing(const LiveStats* stats, const PanelModel& model) {
  const FrameTimeHistory& frames = model.frame_times();
  const double mean_ms = frames.mean();
  ImGui::Text("display %.1f FPS   generated %.1f FPS", mean_ms > 0.0 ? 1000.0 / mean_ms : 0.0,
              model.generated_fps());
  char overlay[64];
  std::snprintf(overlay, sizeof(overlay), "p50 %.2f ms  p99 %.2f ms", frames.percentile(50.0),
                frames.percentile(99.0));
  const float scale_max = std::max(frames.max() * 1.2f, 1.0f);
  ImGui::PlotLines("##frame_time", frames.data(), frames.size(), frames.offset(), overlay, 0.0f,
                   scale_max, ImVec2(ImGui::GetContentRegionAvail().x, 50.0f));
  ImGui::TextDisabled("display frame time (ms, last %d)", frames.size());
  const FrameTimeHistory& produced = model.produce_times();
  if (stats && stats->has_policy) {
    ImGui::Text("model %.1f  decode %.2f  present %.2f ms", model.model_times().mean(),
                model.decode_times().mean(), model.present_times().mean());
    std::snprintf(overlay, sizeof(overlay), "per frame p50 %.1f  p99 %.1f ms",
                  produced.percentile(50.0), produced.percentile(99.0));
    ImGui::PlotLines("##produce_time", produced.data(), produced.size(), produced.offset(), overlay,
                     0.0f, std::max(produced.max() * 1.2f, 1.0f),
                     ImVec2(ImGui::GetContentRegionAvail().x, 40.0f));
  } else {
    ImGui::Text("produce %.2f  present %.2f ms", produced.mean(), model.present_times().mean());
  }
}

void draw_controls(const LiveStats* stats, PanelModel& model, PanelRequests& requests) {
  const bool paused = stats && stats->paused;
  if (ImGui::Button(paused ? "Resume" : "Pause")) model.toggle_pause();
  ImGui::SameLine();
  if (ImGui::Button("Step")) model.single_step();
  ImGui::SameLine();
  if (ImGui::Button("Reset")) model.reset();
  ImGui::SameLine();
  if (ImGui::Button("Screenshot")) requests.screenshot = true;
  ImGui::SameLine();
  const bool recording = stats && stats->recording;
  if (recording) ImGui::PushStyleColor(ImGuiCol_Button, ImVec4(0.7f, 0.15f, 0.15f, 1.0f));
  if (ImGui::Button(recording ? "Stop" : "Record")) model.toggle_recording(recording);
  if (recording) ImGui::PopStyleColor();
  // Note [Game frame rate]: how fast the world goes; 0 generates one frame per displayed frame.
  float rate = stats ? static_cast<float>(stats->frame_rate) : 0.0f;
  ImGui::SetNextItemWidth(ImGui::GetContentRegionAvail().x * 0.45f);
  if (ImGui::SliderFloat("frames/s", &rate, 0.0f, 60.0f, rate == 0.0f ? "display" : "%.0f")) {
    model.set_frame_rate(std::round(rate));
  }
}

void draw_policy(const LiveStats& stats, PanelModel& model) {
  ImGui::SetNextItemWidth(ImGui::GetContentRegionAvail().x * 0.45f);
  if (ImGui::BeginCombo("policy", stats.policy.c_str())) {
    for (const std::string& name : stats.policy_names) {
      if (ImGui::Selectable(name.c_str(), name == stats.policy)) model.select_policy(name);
    }
    ImGui::EndCombo();
  }
  ImGui::SameLine();
  if (ImGui::Button("Re-classify")) model.reclassify();
  // Note [Re-cast agreement].
  const double agreement = stats.run.policy.recast_agreement;
  if (!std::isnan(agreement)) {
    ImGui::TextDisabled("last re-cast kept %.0f%% of the heads' types", 100.0 * agreement);
  }
  if (stats.run.switch_ms > 0.0) {
    ImGui::TextDisabled("last switch: context re-committed in %.0f ms", stats.run.switch_ms);
  }
}

// A hovered item's tooltip, wrapped to a readable width.
void wrapped_tooltip(const char* text) {
  if (!ImGui::IsItemHovered()) return;
  ImGui::BeginTooltip();
  ImGui::PushTextWrapPos(ImGui::GetFontSize() * 24.0f);
  ImGui::TextUnformatted(text);
  ImGui::PopTextWrapPos();
  ImGui::EndTooltip();
}

// Note [Play settings], live: a slider for each setting the model has (none without tokens).
// Like the policy's sliders, every change is sent (on CUDA each re-records the block).
void draw_play_settings(const LiveStats& stats, PanelModel& model) {
  if (!stats.run.play.is_object()) return;
  for (const PlaySlider& slider : stats.geometry.play) {
    const auto it = stats.run.play.find(slider.key);
    if (it == stats.run.play.end() || !it->is_number()) continue;
    ImGui::SetNextItemWidth(ImGui::GetContentRegionAvail().x * 0.6f);
    if (slider.integer) {
      int value = it->get<int>();
      if (ImGui::SliderInt(slider.label.c_str(), &value, static_cast<int>(slider.min),
                           static_cast<int>(slider.max))) {
        model.configure_play({{slider.key, value}});
      }
    } else {
      float value = it->get<float>();
      if (ImGui::SliderFloat(slider.label.c_str(), &value, static_cast<float>(slider.min),
                             static_cast<float>(slider.max), "%.2f")) {
        model.configure_play({{slider.key, static_cast<double>(value)}});
      }
    }
    if (ImGui::IsItemHovered()) ImGui::SetTooltip("%s", slider.help.c_str());
  }
}

// Note [Worst-token scores]: for a policy that casts heads (its settings carry the key).
void draw_worst_token(const LiveStats& stats, PanelModel& model) {
  if (!stats.has_policy || !stats.settings.is_object()) return;
  const auto it = stats.settings.find("worst_token");
  if (it == stats.settings.end() || !it->is_boolean()) return;
  bool on = it->get<bool>();
  if (ImGui::Checkbox("worst-token scores", &on)) model.set_worst_token(on);
  if (ImGui::IsItemHovered()) {
    ImGui::SetTooltip(
        "Cast each head by its worst token's cosine instead of the mean (and P5): a cheap path "
        "must be right at the sprite's few tokens too (Note [Worst-token scores]); re-casts live");
  }
}

void draw_heads_and_cache(const LiveStats& stats, const PanelModel& model) {
  const attention::PolicyStats& policy = stats.run.policy;
  draw_head_map(stats);
  if (ImGui::BeginTable("##types", 4, ImGuiTableFlags_SizingStretchProp)) {
    ImGui::TableSetupColumn("type");
    ImGui::TableSetupColumn("heads");
    ImGui::TableSetupColumn("tokens");
    ImGui::TableSetupColumn("MB");
    ImGui::TableHeadersRow();
    for (int t = 0; t < attention::kHeadTypeCount; ++t) {
      const auto type = static_cast<HeadType>(t);
      const attention::TypeStats& s = policy.per_type[static_cast<size_t>(t)];
      if (s.heads == 0 && s.cached_tokens == 0) continue;
      ImGui::TableNextRow();
      ImGui::TableNextColumn();
      ImGui::TextColored(ImGui::ColorConvertU32ToFloat4(head_type_color(type)), "%s",
                         head_type_label(stats, type));
      ImGui::TableNextColumn();
      ImGui::Text("%d", s.heads);
      ImGui::TableNextColumn();
      ImGui::Text("%lld", static_cast<long long>(s.cached_tokens));
      ImGui::TableNextColumn();
      ImGui::Text("%.2f", static_cast<double>(s.cached_bytes) / 1e6);
    }
    ImGui::EndTable();
  }
  if (policy.ann.history_pairs > 0.0) {
    ImGui::Text("AnnSA: %.0f%% of the history's pairs attended", 100.0 * policy.ann.kept_share());
    wrapped_tooltip(
        "since the last reset, over every layer, head and pass: the share of (query, history "
        "key) pairs the buckets allowed, against dense attention over the same history");
    ImGui::TextDisabled(
        "scored %.2fx the allowed pairs, largest bucket %.0f%% of a head's keys",
        policy.ann.allowed_pairs > 0.0 ? policy.ann.gathered_pairs / policy.ann.allowed_pairs : 0.0,
        100.0 * policy.ann.largest_bucket);
  }
  std::vector<Series> series;
  for (int t = 0; t < attention::kHeadTypeCount; ++t) {
    const auto type = static_cast<HeadType>(t);
    if (model.cache_history(type).max() > 0.0f) {
      series.push_back({&model.cache_history(type), head_type_color(type)});
    }
  }
  char overlay[64];
  std::snprintf(overlay, sizeof(overlay), "cache %.2f MB, %lld tokens",
                static_cast<double>(policy.total_bytes()) / 1e6,
                static_cast<long long>(policy.total_tokens()));
  draw_series_plot("##cache_history", series, model.cache_history_max() * 1.1f, 50.0f, overlay);
}

void draw_sliders(const LiveStats& stats, PanelModel& model) {
  for (const SliderSpec& slider : PanelModel::sliders(stats)) {
    ImGui::PushID(slider.label.c_str());
    ImGui::SetNextItemWidth(ImGui::GetContentRegionAvail().x * 0.65f);
    bool changed = false;
    double value = model.held_value(slider).value_or(slider.value);
    if (slider.integer) {
      int v = static_cast<int>(value);
      changed = ImGui::SliderInt(slider.label.c_str(), &v, static_cast<int>(slider.min),
                                 static_cast<int>(slider.max));
      value = v;
    } else {
      float v = static_cast<float>(value);
      changed = ImGui::SliderFloat(slider.label.c_str(), &v, static_cast<float>(slider.min),
                                   static_cast<float>(slider.max), "%.3f");
      value = v;
    }
    if (ImGui::IsItemHovered()) ImGui::SetTooltip("%s", slider.help.c_str());
    // Note [Cast preview]: a cast threshold is held while dragged and sent when let go.
    const auto preview = PanelModel::cast_preview(stats, slider, value);
    if (!preview) {
      if (changed) model.set_slider(slider, value);
    } else {
      if (changed) model.hold_slider(slider, value);
      if (ImGui::IsItemDeactivated()) model.release_slider(slider);
      if (model.held_value(slider)) {
        ImGui::Text("  if let go: sink %d  dummy %d  spatial %d  global %d",
                    (*preview)[static_cast<size_t>(attention::HeadType::kSink)],
                    (*preview)[static_cast<size_t>(attention::HeadType::kDummy)],
                    (*preview)[static_cast<size_t>(attention::HeadType::kSpatial)],
                    (*preview)[static_cast<size_t>(attention::HeadType::kGlobal)]);
      }
    }
    ImGui::PopID();
  }
}

// Places a panel window in a top corner (the letterbox bars leave room on both sides): fixed
// width, as tall as its content up to the display.
void begin_panel_window(const char* name, bool right, bool reanchor) {
  const ImVec2 display = ImGui::GetIO().DisplaySize;
  const ImGuiCond cond = reanchor ? ImGuiCond_Always : ImGuiCond_FirstUseEver;
  ImGui::SetNextWindowPos(ImVec2(right ? display.x - 8.0f : 8.0f, 8.0f), cond,
                          ImVec2(right ? 1.0f : 0.0f, 0.0f));
  ImGui::SetNextWindowSizeConstraints(ImVec2(kPanelWidth, 0.0f),
                                      ImVec2(kPanelWidth, std::max(display.y - 16.0f, 100.0f)));
  ImGui::SetNextWindowBgAlpha(0.85f);
  ImGui::Begin(name, nullptr, ImGuiWindowFlags_AlwaysAutoResize);
}

// Left: what the run is doing (timings, the head casts, the caches).
void draw_inspect_window(const PanelView& view, const LiveStats* stats, const PanelModel& model) {
  begin_panel_window("inspect", /*right=*/false, view.reanchor);
  if (stats) {
    ImGui::Text("%s %dx%d  frame %llu", stats->source_name.c_str(), view.frame_width,
                view.frame_height, static_cast<unsigned long long>(stats->frame_index));
    ImGui::Text("action %s (keys: %s)%s", game::action_name(stats->action), view.held_action,
                stats->paused ? "   [paused]" : "");
  } else {
    ImGui::TextDisabled("starting the source...");
  }
  draw_timing(stats, model);
  if (stats && stats->has_policy) {
    ImGui::Separator();
    const attention::PolicyStats& policy = stats->run.policy;
    ImGui::Text("%s: %s, %lld blocks, context %lld", stats->policy.c_str(),
                policy.classified ? "cast" : "not cast yet",
                static_cast<long long>(policy.blocks_committed),
                static_cast<long long>(stats->run.context_blocks));
    if (stats->run.graph_recordings > 0) {
      // Researchers should see when blocks stop running eagerly (and when a change re-records).
      ImGui::TextDisabled("CUDA graph: %lld blocks replayed, %lld recordings",
                          static_cast<long long>(stats->run.graph_replayed_blocks),
                          static_cast<long long>(stats->run.graph_recordings));
    }
    draw_heads_and_cache(*stats, model);
  }
  ImGui::End();
}

// Right: what the user can do.
PanelRequests draw_control_window(const PanelView& view, const LiveStats* stats,
                                  PanelModel& model) {
  PanelRequests requests;
  requests.filter = view.filter;
  requests.scale_mode = view.scale_mode;
  begin_panel_window("worldcast", /*right=*/true, view.reanchor);
  draw_controls(stats, model, requests);
  if (stats && stats->has_policy) {
    ImGui::Separator();
    draw_policy(*stats, model);
    draw_play_settings(*stats, model);
    draw_sliders(*stats, model);
    draw_worst_token(*stats, model);
  }
  ImGui::PushTextWrapPos(0.0f);
  if (stats && !stats->error.empty()) {
    ImGui::TextColored(ImVec4(1.0f, 0.4f, 0.4f, 1.0f), "%s", stats->error.c_str());
  }
  if (stats && stats->recording) {
    ImGui::TextColored(ImVec4(1.0f, 0.4f, 0.4f, 1.0f), "recording %llu frames to %s",
                       static_cast<unsigned long long>(stats->recorded_frames),
                       stats->record_dir.c_str());
  } else if (stats && !stats->record_note.empty()) {
    ImGui::TextDisabled("%s", stats->record_note.c_str());
  }
  if (!view.last_screenshot.empty()) ImGui::TextDisabled("saved %s", view.last_screenshot.c_str());
  ImGui::PopTextWrapPos();

  ImGui::Separator();
  int filter = view.filter == Filter::kNearest ? 0 : 1;
  ImGui::SetNextItemWidth(ImGui::GetContentRegionAvail().x * 0.4f);
  if (ImGui::Combo("filter", &filter, "nearest\0bilinear\0")) {
    requests.filter_changed = true;
    requests.filter = filter == 0 ? Filter::kNearest : Filter::kBilinear;
  }
  ImGui::SameLine();
  int scale = view.scale_mode == ScaleMode::kInteger ? 0 : 1;
  ImGui::SetNextItemWidth(ImGui::GetContentRegionAvail().x * 0.6f);
  if (ImGui::Combo("scale", &scale, "integer\0fit\0")) {
    requests.scale_mode_changed = true;
    requests.scale_mode = scale == 0 ? ScaleMode::kInteger : ScaleMode::kFit;
  }
  ImGui::TextDisabled("%s", view.device_name.c_str());
  if (view.validation_errors > 0) {
    ImGui::TextColored(ImVec4(1.0f, 0.3f, 0.3f, 1.0f), "validation errors: %llu",
                       static_cast<unsigned long long>(view.validation_errors));
  }
  ImGui::TextDisabled("WASD/arrows move  P pause  N step  R reset");
  ImGui::TextDisabled("F9 record  F12 screenshot  Esc quit");
  ImGui::End();
  return requests;
}

}  // namespace

PanelRequests draw_panel(const PanelView& view, const LiveStats* stats, PanelModel& model) {
  draw_inspect_window(view, stats, model);
  return draw_control_window(view, stats, model);
}

}  // namespace wc::ui
