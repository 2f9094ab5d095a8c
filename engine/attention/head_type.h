// The archetypes a head can be cast as (HeadCast: Sink/Dummy/Spatial/Global; Dummy Forcing adds
// Neighbour) and the scores that decided the cast. See DESIGN.md §6.
#pragma once

#include <cstdint>
#include <limits>
#include <optional>
#include <string_view>

namespace wc::attention {

enum class HeadType : uint8_t {
  kDense = 0,      // not cast (yet): attends like the dense baseline
  kSink = 1,       // first block + current
  kDummy = 2,      // most recent completed block (HeadCast) / last frame (Dummy Forcing) + current
  kSpatial = 3,    // own spatial cell in every frame of the window + current
  kGlobal = 4,     // the whole window + current
  kNeighbour = 5,  // Dummy Forcing only: the most recent block(s) + current
};
inline constexpr int kHeadTypeCount = 6;

const char* head_type_name(HeadType type);  // "dense", "sink", "dummy", "spatial", "global", ...
std::optional<HeadType> parse_head_type(std::string_view name);

// HeadCast's per-head classification scores (NaN until the head has been classified).
// Dummy Forcing stores its normalised attention masses in the same slots (see dummy_policy.h).
struct HeadScores {
  static constexpr float kUnset = std::numeric_limits<float>::quiet_NaN();
  float sink = kUnset;           // S_sink: mean cosine(o_full, o_sink)
  float dummy = kUnset;          // S_dummy: mean cosine(o_full, o_dummy)
  float spatial_mean = kUnset;   // M_sp: mean cosine(o_full, o_spatial)
  float spatial_score = kUnset;  // S_sp: P5(cosine) - gamma * relative error
};

}  // namespace wc::attention
