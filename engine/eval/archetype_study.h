// `worldcast study archetypes`: what each of HeadCast's cheap archetypes earns and costs on a
// trained model. See Note [Archetype study].
#pragma once

#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "engine/eval/eval_options.h"
#include "engine/eval/study_run.h"

namespace wc::eval {

// Note [Archetype study]
// HeadCast gives each head a path: Sink, Dummy and Spatial heads attend to a sliver of the
// window, Global heads to all of it. The study classifies each seed's cast as play does (the
// model's settings and --settings), then plays that cast forced from the first frame and, in
// turn, the same cast with one archetype's heads made Global, beside dense, on the same seed,
// keys and noise. Making a head Global gives it back the whole window, so a row's loss of speed
// against the cast is what that archetype's path earns, and its change in fidelity is what the
// restriction costs. Each row reports the heads of each type (the first seed's), the K/V held at
// the end, the median frame time against dense's (dense timed before and after the rows, whose
// first run pays the process's warm-up), PSNR against dense over the frames after the window's
// first full block, and what a player sees there: the share of frames with a whole sprite and a
// readable HUD. An archetype no head of any seed's cast has gets no row.

struct ArchetypeStudyOptions {
  int frames = 32;  // frames scored per run after the window's first full block, >= 1
};

struct ArchetypeRow : StudyFigures {
  std::string made_global;  // "" for the cast as classified, else "sink", "dummy" or "spatial"
  std::map<std::string, int> heads_by_type;  // the first seed's cast in this row
};

struct ArchetypeStudy {
  std::vector<ArchetypeRow> rows;  // the cast as classified first
  StudyFigures dense;
  int64_t frames_scored = 0;  // per run
  nlohmann::json settings;    // the headcast settings the casts were classified under

  nlohmann::json to_json() const;
  std::string markdown() const;
  // One bar group per row: speed against dense, and the sprite's share (gnuplot-nox). Returns
  // the file written, or why no plot was made.
  std::string plot(const std::string& png) const;
};

// wc::Error ("study archetypes: ...") for frames below 1, no seed, or settings that force a cast
// (the study classifies its own), before any run.
void validate(const ArchetypeStudyOptions& study, const EvalOptions& options);

ArchetypeStudy run_archetype_study(const EvalOptions& options, const ArchetypeStudyOptions& study);

}  // namespace wc::eval
