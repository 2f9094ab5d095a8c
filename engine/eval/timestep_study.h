// `worldcast study timestep`: the cast HeadCast gives and what a player sees under it when the
// heads are classified at each denoising step of the block. See Note [Timestep study].
#pragma once

#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "engine/eval/eval_options.h"
#include "engine/eval/study_run.h"
#include "engine/model/model_config.h"

namespace wc::eval {

// Note [Timestep study]
// HeadCast classifies once, on the block whose history first holds the window, at the denoising
// step `classify_step` of that block (0 the noisiest; a step past the sampler's last is the
// committing pass, which sees the block's clean frames). A token model's steps are its unmasking
// passes: pass 0 sees a frame all masked, the committing pass the frame drawn. The study plays
// HeadCast online with the classification at every step in turn, the committing pass last, on
// each seed's walk beside dense on the same keys and noise: the heads of each type (the first
// seed's), the cast's agreement with step 0's (the share of heads of equal type, mean over seeds,
// as the paper compares casts across steps), the K/V held, the frame time against dense's, PSNR
// against dense and the share of frames with a whole sprite and a readable HUD over the frames
// after the classifying block. A sampler of one step has only its noisiest step and the
// committing pass to choose from; the study asks for at least two denoising steps.

struct TimestepStudyOptions {
  int frames = 32;  // frames scored per run after the window's first full block, >= 1
};

struct TimestepRow : StudyFigures {
  int step = 0;            // classify_step; denoising_steps is the committing pass
  bool clean = false;      // the committing pass
  double agreement = 1.0;  // with step 0's cast, mean over seeds
  std::map<std::string, int> heads_by_type;  // the first seed's cast
};

struct TimestepStudy {
  int denoising_steps = 0;        // the sampler's steps (a token model's passes)
  std::vector<TimestepRow> rows;  // step 0 first, the committing pass last
  StudyFigures dense;
  int64_t frames_scored = 0;  // per run
  nlohmann::json settings;    // the headcast settings, classify_step aside

  nlohmann::json to_json() const;
  std::string markdown() const;
  // Agreement with step 0 and PSNR against dense per step (gnuplot-nox). Returns the file
  // written, or why no plot was made.
  std::string plot(const std::string& png) const;
};

// The denoising steps of a block under `config`'s sampler: a token model's passes, else the
// flow sampler's steps.
int denoising_steps(const model::ModelConfig& config);

// wc::Error ("study timestep: ...") for frames below 1, no seed, a sampler of one step, or
// settings that force a cast or set classify_step (the study sets it), before any run.
void validate(const TimestepStudyOptions& study, const EvalOptions& options);

TimestepStudy run_timestep_study(const EvalOptions& options, const TimestepStudyOptions& study);

}  // namespace wc::eval
