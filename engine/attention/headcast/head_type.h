// The archetypes a head can be cast as (HeadCast: Sink/Dummy/Spatial/Global; Dummy Forcing adds
// Neighbour) and the scores that decided the cast. See DESIGN.md §6.
#pragma once

#include <cstdint>
#include <limits>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

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

// How many heads of `cast` ([layer][head]) are of each type, by head_type_name; a type no head
// has is absent.
std::map<std::string, int> head_type_counts(const std::vector<std::vector<HeadType>>& cast);
// The counts as a reader sees them: "6 dummy, 58 global" (types by name).
std::string head_type_counts_text(const std::map<std::string, int>& counts);

// HeadCast's per-head classification scores (NaN until the head has been classified).
// Dummy Forcing stores its normalised attention masses in the same slots (see dummy_policy.h).
struct HeadScores {
  static constexpr float kUnset = std::numeric_limits<float>::quiet_NaN();
  float sink = kUnset;           // S_sink: mean cosine(o_full, o_sink)
  float dummy = kUnset;          // S_dummy: mean cosine(o_full, o_dummy)
  float spatial_mean = kUnset;   // M_sp: mean cosine(o_full, o_spatial)
  float spatial_score = kUnset;  // S_sp: P5(cosine) - gamma * relative error
};

struct CastThresholds {
  double theta_dummy = 0.95;
  double theta_sink = 0.95;
  double theta_spatial = 0.95;
  double theta_spatial_score = 0.755;
  double gamma = 5.0;
  // Note [Worst-token scores]: score each path by its worst token instead of the mean and P5.
  bool worst_token = false;
};

// HeadCast's rule on a head's scores: Dummy if S_dummy ≥ θ_d; else Sink if S_sink ≥ θ_s; else
// Spatial if M_sp ≥ θ_sp and S_sp ≥ θ_sc; else Global. The scores already carry γ and the
// worst-token choice; only the θs are read. The policy casts with it (cast_head) and the panel
// previews a cast with it (Note [Cast preview] in ui/window/panel_model.h).
inline HeadType cast_by_rule(double sink, double dummy, double spatial_mean, double spatial_score,
                             const CastThresholds& t) {
  if (dummy >= t.theta_dummy) return HeadType::kDummy;
  if (sink >= t.theta_sink) return HeadType::kSink;
  if (spatial_mean >= t.theta_spatial && spatial_score >= t.theta_spatial_score) {
    return HeadType::kSpatial;
  }
  return HeadType::kGlobal;
}
inline HeadType cast_from_scores(const HeadScores& s, const CastThresholds& t) {
  return cast_by_rule(s.sink, s.dummy, s.spatial_mean, s.spatial_score, t);
}

}  // namespace wc::attention
