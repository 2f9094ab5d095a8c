// The panel's head map: a layers x heads grid of coloured cells, one per attention head, coloured
// by its cast; hovering a cell shows the head's four HeadCast scores. Drawn with ImGui
// primitives (rectangles from the font atlas' white pixel): ImGui 1.86's Vulkan backend cannot
// draw user textures (DESIGN.md §9).
#pragma once

#include <imgui.h>

#include "engine/attention/headcast/head_type.h"
#include "ui/inference/live_stats.h"

namespace wc::ui {

// The colour of a head type everywhere in the panel (map, legend, cache plot).
ImU32 head_type_color(attention::HeadType type);
// The type's name as the policies report it (from the snapshot), or "?".
const char* head_type_label(const LiveStats& stats, attention::HeadType type);

// Draws the grid at the cursor, as wide as the content region (cells at most 18 px).
void draw_head_map(const LiveStats& stats);

}  // namespace wc::ui
