// The panel and its frame-time ring, drawn by ImGui without a renderer (like example_null).
#include <gtest/gtest.h>

#include <imgui.h>

#include "ui/frame_time_history.h"
#include "ui/panel.h"

namespace wc::ui {
namespace {

TEST(FrameTimeHistory, RingKeepsNewestSamplesInPlotOrder) {
  FrameTimeHistory history(4);
  EXPECT_EQ(history.size(), 0);
  EXPECT_EQ(history.percentile(50.0), 0.0);
  for (int i = 1; i <= 6; ++i) history.push(static_cast<float>(i));
  EXPECT_EQ(history.size(), 4);
  // Holds 3, 4, 5, 6; PlotLines starts reading at offset().
  const int offset = history.offset();
  EXPECT_EQ(history.data()[offset], 3.0f);
  EXPECT_EQ(history.data()[(offset + 3) % 4], 6.0f);
  EXPECT_DOUBLE_EQ(history.percentile(50.0), 4.5);
  EXPECT_DOUBLE_EQ(history.mean(), 4.5);
  EXPECT_EQ(history.max(), 6.0f);
}

TEST(Panel, DrawsWithoutARenderer) {
  ImGui::CreateContext();
  ImGuiIO& io = ImGui::GetIO();
  io.IniFilename = nullptr;
  io.DisplaySize = ImVec2(1280.0f, 640.0f);
  io.DeltaTime = 1.0f / 60.0f;
  unsigned char* pixels = nullptr;
  int width = 0;
  int height = 0;
  io.Fonts->GetTexDataAsRGBA32(&pixels, &width, &height);

  FrameTimeHistory history;
  for (int i = 0; i < 100; ++i) history.push(16.0f + static_cast<float>(i % 5));
  PanelView view;
  view.source_name = "game";
  view.frame_width = 128;
  view.frame_height = 128;
  view.frame_index = 42;
  view.device_name = "test";
  for (int frame = 0; frame < 2; ++frame) {
    ImGui::NewFrame();
    const PanelRequests requests = draw_panel(view, history);
    EXPECT_FALSE(requests.toggle_pause);
    EXPECT_FALSE(requests.filter_changed);
    ImGui::Render();
  }
  const ImDrawData* draw = ImGui::GetDrawData();
  ASSERT_NE(draw, nullptr);
  EXPECT_GT(draw->CmdListsCount, 0);
  EXPECT_GT(draw->TotalVtxCount, 100);
  ImGui::DestroyContext();
}

}  // namespace
}  // namespace wc::ui
