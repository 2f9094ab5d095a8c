// Several rings of samples as lines in one box (ImGui::PlotLines draws one series only and
// ImPlot is not packaged for Debian): the cache-size-per-type history.
#pragma once

#include <imgui.h>

#include <vector>

#include "ui/window/frame_time_history.h"

namespace wc::ui {

struct Series {
  const FrameTimeHistory* samples = nullptr;
  ImU32 color = 0;
};

// Draws the series at the cursor, width = content region, y from 0 to `max_value`; `overlay` is
// written in the top-left corner.
void draw_series_plot(const char* id, const std::vector<Series>& series, float max_value,
                      float height, const char* overlay);

}  // namespace wc::ui
