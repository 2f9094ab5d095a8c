// See series_plot.h.
#include "ui/window/series_plot.h"

#include <algorithm>

namespace wc::ui {

void draw_series_plot(const char* id, const std::vector<Series>& series, float max_value,
                      float height, const char* overlay) {
  const ImVec2 origin = ImGui::GetCursorScreenPos();
  const ImVec2 size(ImGui::GetContentRegionAvail().x, height);
  ImDrawList* draw = ImGui::GetWindowDrawList();
  draw->AddRectFilled(origin, ImVec2(origin.x + size.x, origin.y + size.y),
                      ImGui::GetColorU32(ImGuiCol_FrameBg));
  const float top = std::max(max_value, 1e-6f);
  std::vector<ImVec2> points;
  for (const Series& s : series) {
    const int count = s.samples->size();
    if (count < 2) continue;
    points.clear();
    for (int i = 0; i < count; ++i) {
      const float value = s.samples->data()[(s.samples->offset() + i) % count];
      const float x = origin.x + size.x * static_cast<float>(i) / static_cast<float>(count - 1);
      const float y = origin.y + size.y * (1.0f - std::clamp(value / top, 0.0f, 1.0f));
      points.emplace_back(x, y);
    }
    draw->AddPolyline(points.data(), static_cast<int>(points.size()), s.color, 0, 1.5f);
  }
  if (overlay) {
    draw->AddText(ImVec2(origin.x + 4.0f, origin.y + 2.0f), ImGui::GetColorU32(ImGuiCol_Text),
                  overlay);
  }
  ImGui::InvisibleButton(id, size);
}

}  // namespace wc::ui
