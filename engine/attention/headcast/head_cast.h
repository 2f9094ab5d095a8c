// HeadCast's decision rule: from a head's classification evidence and the thresholds to its type
// (DESIGN.md §6.2). Pure and cheap, so live tuning re-casts every head instantly.
#pragma once

#include <limits>

#include "engine/attention/headcast/cast_settings.h"
#include "engine/attention/headcast/head_type.h"

namespace wc::attention {

// What classification measured for one head. The spatial percentile and error are kept apart so
// that a change of gamma re-scores without re-classifying.
struct HeadEvidence {
  static constexpr double kUnset = std::numeric_limits<double>::quiet_NaN();
  double sink = kUnset;           // mean cos(o_full, o_sink)
  double dummy = kUnset;          // mean cos(o_full, o_dummy)
  double spatial_mean = kUnset;   // mean cos(o_full, o_spatial)
  double spatial_p5 = kUnset;     // 5th percentile of cos(o_full, o_spatial)
  double spatial_error = kUnset;  // Σ‖o_full − o_spatial‖² / Σ‖o_full‖²
  // The worst token's cosine of each path (Note [Worst-token scores]).
  double sink_worst = kUnset;
  double dummy_worst = kUnset;
  double spatial_worst = kUnset;

  bool measured() const { return sink == sink; }
};

// The worse of two measurements of one head, score by score (the lower cosines, the larger
// spatial error): Note [Every-step evidence]. An unmeasured side gives the other.
HeadEvidence worst_evidence(const HeadEvidence& a, const HeadEvidence& b);

// The four scores the panel shows and the cast reads: S_sink, S_dummy, M_sp, S_sp = P5 − gamma·e;
// with thresholds.worst_token, S_sink and S_dummy are the worst token's cosines and S_sp takes the
// worst token's in place of P5 (Note [Worst-token scores]).
HeadScores head_scores(const HeadEvidence& evidence, const CastThresholds& thresholds);

// Dummy if S_dummy ≥ θ_d; else Sink if S_sink ≥ θ_s; else Spatial if M_sp ≥ θ_sp and
// S_sp ≥ θ_sc; else Global (the scores of head_scores).
HeadType cast_head(const HeadEvidence& evidence, const CastThresholds& thresholds);

}  // namespace wc::attention
