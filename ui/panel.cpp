// The panel's widgets; see panel.h.
#include "ui/panel.h"

#include <imgui.h>

#include <algorithm>
#include <cstdio>

namespace wc::ui {

PanelRequests draw_panel(const PanelView& view, const FrameTimeHistory& frame_times) {
  PanelRequests requests;
  requests.filter = view.filter;
  requests.scale_mode = view.scale_mode;

  // Top right: with the default window layout that is the letterbox bar, clear of the game.
  const ImVec2 display = ImGui::GetIO().DisplaySize;
  ImGui::SetNextWindowPos(ImVec2(display.x - 8.0f, 8.0f),
                          view.reanchor ? ImGuiCond_Always : ImGuiCond_FirstUseEver,
                          ImVec2(1.0f, 0.0f));
  ImGui::SetNextWindowSize(ImVec2(kPanelWidth, 0.0f), ImGuiCond_FirstUseEver);
  ImGui::SetNextWindowBgAlpha(0.8f);
  ImGui::Begin("worldcast");

  const double mean_ms = frame_times.mean();
  ImGui::Text("%s %dx%d  frame %llu", view.source_name.c_str(), view.frame_width, view.frame_height,
              static_cast<unsigned long long>(view.frame_index));
  ImGui::Text("FPS %.1f   action %s%s", mean_ms > 0.0 ? 1000.0 / mean_ms : 0.0, view.action_name,
              view.paused ? "   [paused]" : "");

  char overlay[64];
  std::snprintf(overlay, sizeof(overlay), "p50 %.2f ms  p99 %.2f ms", frame_times.percentile(50.0),
                frame_times.percentile(99.0));
  const float scale_max = std::max(frame_times.max() * 1.2f, 1.0f);
  ImGui::PlotLines("##frame_time", frame_times.data(), frame_times.size(), frame_times.offset(),
                   overlay, 0.0f, scale_max, ImVec2(ImGui::GetContentRegionAvail().x, 60.0f));
  ImGui::Text("frame time (ms, last %d)   produce %.2f ms", frame_times.size(), view.produce_ms);

  ImGui::Separator();
  if (ImGui::Button(view.paused ? "Resume" : "Pause")) requests.toggle_pause = true;
  ImGui::SameLine();
  if (ImGui::Button("Step")) requests.single_step = true;
  ImGui::SameLine();
  if (ImGui::Button("Reset")) requests.reset = true;
  ImGui::SameLine();
  if (ImGui::Button("Screenshot")) requests.screenshot = true;

  int filter = view.filter == Filter::kNearest ? 0 : 1;
  if (ImGui::Combo("filter", &filter, "nearest\0bilinear\0")) {
    requests.filter_changed = true;
    requests.filter = filter == 0 ? Filter::kNearest : Filter::kBilinear;
  }
  int scale = view.scale_mode == ScaleMode::kInteger ? 0 : 1;
  if (ImGui::Combo("scale", &scale, "integer\0fit\0")) {
    requests.scale_mode_changed = true;
    requests.scale_mode = scale == 0 ? ScaleMode::kInteger : ScaleMode::kFit;
  }

  ImGui::Separator();
  ImGui::TextDisabled("%s", view.device_name.c_str());
  if (view.validation_errors > 0) {
    ImGui::TextColored(ImVec4(1.0f, 0.3f, 0.3f, 1.0f), "validation errors: %llu",
                       static_cast<unsigned long long>(view.validation_errors));
  }
  if (!view.last_screenshot.empty()) ImGui::TextDisabled("saved %s", view.last_screenshot.c_str());
  ImGui::TextDisabled("WASD/arrows move  P pause  N step");
  ImGui::TextDisabled("R reset  F12 screenshot  Esc quit");
  ImGui::End();
  return requests;
}

}  // namespace wc::ui
