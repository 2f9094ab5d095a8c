// See head_cast.h.
#include "engine/attention/head_cast.h"

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
