// See head_cast.h.
#include "engine/attention/headcast/head_cast.h"

#include <algorithm>

namespace wc::attention {

namespace {

struct Scores {
  double sink, dummy, spatial_mean, spatial_score;
};

Scores scores_of(const HeadEvidence& e, const CastThresholds& t) {
  const double tail = t.worst_token ? e.spatial_worst : e.spatial_p5;
  return Scores{t.worst_token ? e.sink_worst : e.sink, t.worst_token ? e.dummy_worst : e.dummy,
                e.spatial_mean, tail - t.gamma * e.spatial_error};
}

}  // namespace

HeadScores head_scores(const HeadEvidence& evidence, const CastThresholds& thresholds) {
  HeadScores scores;
  if (!evidence.measured()) return scores;
  const Scores s = scores_of(evidence, thresholds);
  scores.sink = static_cast<float>(s.sink);
  scores.dummy = static_cast<float>(s.dummy);
  scores.spatial_mean = static_cast<float>(s.spatial_mean);
  scores.spatial_score = static_cast<float>(s.spatial_score);
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
  worst.sink_worst = std::min(a.sink_worst, b.sink_worst);
  worst.dummy_worst = std::min(a.dummy_worst, b.dummy_worst);
  worst.spatial_worst = std::min(a.spatial_worst, b.spatial_worst);
  return worst;
}

HeadType cast_head(const HeadEvidence& evidence, const CastThresholds& t) {
  const Scores s = scores_of(evidence, t);
  return cast_by_rule(s.sink, s.dummy, s.spatial_mean, s.spatial_score, t);
}

}  // namespace wc::attention
