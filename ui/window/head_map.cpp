// See head_map.h.
#include "ui/window/head_map.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

namespace wc::ui {

ImU32 head_type_color(attention::HeadType type) {
  switch (type) {
    case attention::HeadType::kDense:
      return IM_COL32(120, 120, 120, 255);
    case attention::HeadType::kSink:
      return IM_COL32(70, 130, 230, 255);
    case attention::HeadType::kDummy:
      return IM_COL32(170, 90, 210, 255);
    case attention::HeadType::kSpatial:
      return IM_COL32(80, 190, 100, 255);
    case attention::HeadType::kGlobal:
      return IM_COL32(235, 150, 50, 255);
    case attention::HeadType::kNeighbour:
      return IM_COL32(60, 190, 190, 255);
  }
  return IM_COL32(255, 0, 255, 255);
}

const char* head_type_label(const LiveStats& stats, attention::HeadType type) {
  const auto index = static_cast<size_t>(type);
  return index < stats.geometry.type_names.size() ? stats.geometry.type_names[index].c_str() : "?";
}

void draw_head_map(const LiveStats& stats) {
  const auto& heads = stats.run.policy.heads;
  if (heads.empty() || heads.front().empty()) {
    ImGui::TextDisabled("no per-head stats from this policy");
    return;
  }
  const int layers = static_cast<int>(heads.size());
  const int per_layer = static_cast<int>(heads.front().size());
  const float label_width = ImGui::CalcTextSize("L00 ").x;
  const float avail = ImGui::GetContentRegionAvail().x - label_width;
  const float cell = std::clamp(std::floor(avail / static_cast<float>(per_layer)), 3.0f, 18.0f);
  const ImVec2 origin = ImGui::GetCursorScreenPos();
  const ImVec2 size(label_width + cell * static_cast<float>(per_layer),
                    cell * static_cast<float>(layers));
  ImDrawList* draw = ImGui::GetWindowDrawList();
  const bool labels = cell >= ImGui::GetFontSize() * 0.8f;
  for (int l = 0; l < layers; ++l) {
    const float y = origin.y + cell * static_cast<float>(l);
    if (labels || l % 4 == 0) {
      char text[16];
      std::snprintf(text, sizeof(text), "L%d", l);
      draw->AddText(ImVec2(origin.x, y), ImGui::GetColorU32(ImGuiCol_TextDisabled), text);
    }
    const auto& row = heads[static_cast<size_t>(l)];
    for (int h = 0; h < per_layer && h < static_cast<int>(row.size()); ++h) {
      const float x = origin.x + label_width + cell * static_cast<float>(h);
      draw->AddRectFilled(ImVec2(x, y), ImVec2(x + cell - 1.0f, y + cell - 1.0f),
                          head_type_color(row[static_cast<size_t>(h)].type));
    }
  }
  ImGui::InvisibleButton("##head_map", size);
  if (!ImGui::IsItemHovered()) return;
  const ImVec2 mouse = ImGui::GetIO().MousePos;
  const int h = static_cast<int>((mouse.x - origin.x - label_width) / cell);
  const int l = static_cast<int>((mouse.y - origin.y) / cell);
  if (l < 0 || l >= layers || h < 0 || h >= per_layer) return;
  const attention::HeadStats& head = heads[static_cast<size_t>(l)][static_cast<size_t>(h)];
  ImGui::BeginTooltip();
  ImGui::Text("layer %d head %d: %s", l, h, head_type_label(stats, head.type));
  const auto score = [](const char* name, float value) {
    if (std::isnan(value)) {
      ImGui::Text("%-8s  -", name);
    } else {
      ImGui::Text("%-8s  %.4f", name, static_cast<double>(value));
    }
  };
  score("S_sink", head.scores.sink);
  score("S_dummy", head.scores.dummy);
  score("M_sp", head.scores.spatial_mean);
  score("S_sp", head.scores.spatial_score);
  ImGui::EndTooltip();
}

}  // namespace wc::ui
