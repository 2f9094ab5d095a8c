// See head_cast.h.
#include "engine/attention/head_cast.h"

#include <algorithm>

namespace wc::attention {

HeadScores head_scores(const HeadEvidence& evidence, double gamma) {
  HeadScores scores;
  if (!evidence.measured()) return scores;
  scores.sink = static_cast<float>(evidence.sink);
  scores.dummy = static_cast<float>(evidence.dummy);
  scores.spatial_mean = static_cast<float>(evidence.spatial_mean);
  scores.spatial_score = static_cast<float>(evidence.spatial_p5 - gamma * evidence.spatial_error);
  return scores;
}

HeadEvidence worst_evidence(const HeadEvidence& a, const HeadEvidence& b) {
  if (!a.measured()) return b;
  if (!b.measured()) return a;
  HeadEvidence worst;
  worst.sink = std::min(a.sink, b.sink);
  worst.dummy = std::min(a.dummy, b.dummy);
  worst.spatial_mean = std::min(a.spatial_mean, b.spatial_mean);
  worst.spatial_p5 = std::min(a.spatial_p5, b.spatial_p5);
  worst.spatial_error = std::max(a.spatial_error, b.spatial_error);
  return worst;
}

HeadType cast_head(const HeadEvidence& evidence, const CastThresholds& t) {
  if (evidence.dummy >= t.theta_dummy) return HeadType::kDummy;
  if (evidence.sink >= t.theta_sink) return HeadType::kSink;
  const double spatial_score = evidence.spatial_p5 - t.gamma * evidence.spatial_error;
  if (evidence.spatial_mean >= t.theta_spatial && spatial_score >= t.theta_spatial_score) {
    return HeadType::kSpatial;
  }
  return HeadType::kGlobal;
}

}  // namespace wc::attention
