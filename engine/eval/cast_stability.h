// `worldcast study cast-stability`: HeadCast casts every head once, online; how much of that cast
// would another held-out seed, another classification block, another denoising step or another
// walk have given? See Note [Cast stability].
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "engine/attention/headcast/head_type.h"
#include "engine/eval/eval_options.h"

namespace wc::eval {

// Note [Cast stability]
// One factor at a time around a reference run (the first seed, the first classification block,
// the first denoising step, walk 0): every other seed with the reference's block, step and walk;
// every other block with the reference's seed, step and walk; and so on. A run plays the model
// under HeadCast (the eval's headcast settings, with classify_block and classify_step set) on the
// eval's player-like walk of its seed (walk w > 0: the walk of the seed mixed with w) until every
// layer is cast, and keeps the cast. A factor's agreement is the mean, over its runs, of the share
// of heads whose type equals the reference's, as the paper reports agreement across steps,
// samples and prompts. Per head, the share of all runs that give it its most frequent type says
// which heads move. Casts are compared type by type: a head that is Global in one run and Spatial
// in another disagrees even if both are "expensive".

struct CastStudyOptions {
  std::vector<int64_t> classify_blocks;  // >= 1; empty: the window's first full block (-1)
  std::vector<int> classify_steps{0};    // denoising steps (0 = the noisiest)
  int walks = 2;                         // walks per seed, >= 1
};

struct CastRun {
  std::string factor;  // "reference", "seed", "block", "step" or "walk"
  uint64_t seed = 0;
  int64_t classify_block = -1;
  int classify_step = 0;
  int walk = 0;
  int64_t frames = 0;                                  // frames played until every layer was cast
  std::vector<std::vector<attention::HeadType>> cast;  // [layer][head]
  double agreement = 1.0;                              // with the reference's cast
};

struct CastStability {
  std::vector<CastRun> runs;  // the reference first
  // Per factor that has runs: the mean agreement with the reference, and the runs averaged.
  struct Factor {
    std::string name;
    double agreement = 0.0;
    int runs = 0;
  };
  std::vector<Factor> factors;
  std::vector<std::vector<double>> head_agreement;  // [layer][head]: share of runs at its mode
  double overall = 0.0;                             // mean agreement of every non-reference run
  nlohmann::json settings;                          // the reference run's headcast settings

  nlohmann::json to_json() const;
  std::string markdown() const;
  // The per-head agreement as a heat map PNG through gnuplot (gnuplot-nox); returns the file
  // written, or why no plot was made.
  std::string plot(const std::string& png) const;
};

// wc::Error ("study cast-stability: ...") for a block below 1, a negative step, walks below 1 or
// no seed, before any run.
void validate(const CastStudyOptions& study, const EvalOptions& options);

CastStability run_cast_stability(const EvalOptions& options, const CastStudyOptions& study);

// The share of heads of equal type; the casts must have the same shape.
double cast_agreement(const std::vector<std::vector<attention::HeadType>>& a,
                      const std::vector<std::vector<attention::HeadType>>& b);

}  // namespace wc::eval
