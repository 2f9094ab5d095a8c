// `worldcast study thresholds`: what HeadCast's two thresholds buy and cost on a trained model.
// See Note [Threshold study].
#pragma once

#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "engine/eval/eval_options.h"
#include "engine/eval/study_run.h"

namespace wc::eval {

// Note [Threshold study]
// HeadCast casts a head by its scores against θ (the share of the full output a cheap path must
// keep: theta_dummy, theta_sink and theta_spatial, one value as in the paper) and θ_sc (the
// Spatial path's worst-case score, theta_spatial_score). Each cell of a θ × θ_sc grid plays the
// model under HeadCast with those thresholds over the eval's settings (the model's own and
// --settings otherwise), on each seed's player-like walk, beside dense on the same seed, keys and
// noise. Per cell: the heads of each type (the first seed's cast), the K/V the policy holds at
// the end, the frame time against dense's in the same run (median over the frames after the
// cast applies; dense is timed before and after the grid, whose first run pays the process's
// warm-up), the frames' PSNR against
// dense's over those frames, and what a player sees in them: the share of frames whose sprite is
// one of the game's poses and whose HUD digits read as a count. A lower θ casts more heads
// cheap and plays faster; the sprite and HUD say whether the game survives it. PSNR against dense
// is a weak guide for a model that samples tokens: one different draw gives a different world.

struct ThresholdStudyOptions {
  std::vector<double> thetas{0.9, 0.95, 0.98};
  std::vector<double> theta_scs{0.7, 0.755, 0.8};
  int frames = 32;  // frames scored per run after the cast applies, >= 1
};

struct ThresholdCell : StudyFigures {
  double theta = 0.0, theta_sc = 0.0;
  std::map<std::string, int> heads_by_type;  // the first seed's cast
};

struct ThresholdStudy {
  std::vector<ThresholdCell> cells;  // θ-major
  StudyFigures dense;
  int64_t frames_scored = 0;  // per run
  nlohmann::json settings;    // the headcast settings under the grid's thresholds

  nlohmann::json to_json() const;
  std::string markdown() const;
  // Speed against dense on x; PSNR against dense and the sprite's share on y, one point per
  // cell, labelled θ/θ_sc (gnuplot-nox). Returns the file written, or why no plot was made.
  std::string plot(const std::string& png) const;
};

// wc::Error ("study thresholds: ...") for an empty grid, a θ outside [0, 1], a θ_sc outside
// [-10, 1], frames below 1 or no seed, before any run.
void validate(const ThresholdStudyOptions& study, const EvalOptions& options);

ThresholdStudy run_threshold_study(const EvalOptions& options, const ThresholdStudyOptions& study);

}  // namespace wc::eval
