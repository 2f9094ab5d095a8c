// See timestep_study.h and Note [Timestep study].
#include "engine/eval/timestep_study.h"

#include <sstream>

#include "engine/attention/headcast/head_type.h"
#include "engine/core/error.h"
#include "engine/eval/cast_stability.h"
#include "engine/eval/eval_session.h"

namespace wc::eval {
namespace {

constexpr const char* kWhere = "study timestep";

std::string row_name(const TimestepRow& row) {
  return row.clean ? "committing pass" : "step " + std::to_string(row.step);
}

}  // namespace

int denoising_steps(const model::ModelConfig& config) {
  return config.tokens.active() ? config.tokens.passes : config.sampler.steps;
}

void validate(const TimestepStudyOptions& study, const EvalOptions& options) {
  if (options.seeds.empty()) throw Error(kWhere, "no seed to study");
  if (study.frames < 1) throw Error(kWhere, "frames: must be at least 1");
  const int steps = denoising_steps(options.config);
  if (steps < 2) {
    throw Error(kWhere, "the model's sampler draws a block in " + std::to_string(steps) +
                            " denoising step; a timestep study needs at least two to compare");
  }
  if (forces_a_cast(options)) {
    throw Error(kWhere, "the settings force a cast; the study classifies its own (drop \"cast\")");
  }
  if (options.settings.count("headcast") != 0 &&
      options.settings.at("headcast").contains("classify_step")) {
    throw Error(kWhere, "the settings set classify_step; the study sets it for each row");
  }
}

TimestepStudy run_timestep_study(const EvalOptions& options, const TimestepStudyOptions& study) {
  validate(options);
  validate(study, options);
  const int64_t skip = eval_window_frames(options) + options.config.frames_per_block;
  const int64_t steps = skip + study.frames;
  nlohmann::json base = eval_policy_settings(options, "headcast");
  base.erase("classify_step");

  TimestepStudy result;
  result.denoising_steps = denoising_steps(options.config);
  result.settings = base;
  result.frames_scored = study.frames;
  for (int s = 0; s <= result.denoising_steps; ++s) {
    TimestepRow row;
    row.step = s;
    row.clean = s == result.denoising_steps;
    result.rows.push_back(row);
  }
  std::vector<StudyPool> pools(result.rows.size());
  std::vector<double> agreement_sums(result.rows.size(), 0.0);
  StudyPool dense_pool;
  for (uint64_t seed : options.seeds) {
    const std::vector<game::Action> actions = eval_actions(options, seed, static_cast<int>(steps));
    report_progress(options, std::string(kWhere) + ": seed " + std::to_string(seed) + ", dense");
    const StudyRun dense = play_study_run(options, "dense", seed, actions, skip, kWhere);
    dense_pool.add(dense);
    std::vector<std::vector<attention::HeadType>> first_cast;
    for (size_t r = 0; r < result.rows.size(); ++r) {
      TimestepRow& row = result.rows[r];
      EvalOptions row_options = options;
      row_options.settings["headcast"] = base;
      row_options.settings["headcast"]["classify_step"] = row.step;
      report_progress(
          options, std::string(kWhere) + ": seed " + std::to_string(seed) + ", " + row_name(row));
      const StudyRun run = play_study_run(row_options, "headcast", seed, actions, skip, kWhere);
      if (r == 0) first_cast = run.cast;
      agreement_sums[r] += cast_agreement(first_cast, run.cast);
      if (seed == options.seeds.front()) row.heads_by_type = run.heads_by_type;
      pools[r].add(run, &dense);
    }
    // Dense again after the rows: the process's first run pays its warm-up.
    dense_pool.add_times(play_study_run(options, "dense", seed, actions, skip, kWhere));
  }
  result.dense = dense_pool.figures();
  const double seeds = static_cast<double>(options.seeds.size());
  for (size_t r = 0; r < result.rows.size(); ++r) {
    TimestepRow& row = result.rows[r];
    static_cast<StudyFigures&>(row) = pools[r].figures(result.dense.ms_per_frame);
    row.agreement = agreement_sums[r] / seeds;
  }
  return result;
}

nlohmann::json TimestepStudy::to_json() const {
  nlohmann::json out_rows = nlohmann::json::array();
  for (const TimestepRow& r : rows) {
    nlohmann::json row = r.to_json();
    row["classify_step"] = r.step;
    row["committing_pass"] = r.clean;
    row["agreement_with_step_0"] = r.agreement;
    row["heads_by_type"] = r.heads_by_type;
    out_rows.push_back(row);
  }
  return {{"study", "timestep"},
          {"settings", settings},
          {"denoising_steps", denoising_steps},
          {"frames_scored", frames_scored},
          {"dense", dense.to_json()},
          {"rows", out_rows}};
}

std::string TimestepStudy::markdown() const {
  std::ostringstream out;
  out << "| classified at | heads by type | agreement with step 0 | K/V held | ms/frame | speed vs "
         "dense | PSNR vs dense | sprite | HUD |\n| --- | --- | --- | --- | --- | --- | --- | --- "
         "| --- |\n"
      << dense.dense_row(2);
  for (const TimestepRow& r : rows) {
    out << "| " << row_name(r) << " | " << attention::head_type_counts_text(r.heads_by_type)
        << " | " << formatted(100.0 * r.agreement, "%.1f %%") << " |" << r.table_cells() << "\n";
  }
  out << "\n"
      << denoising_steps << " denoising steps a block (step 0 the noisiest), then the committing "
      << "pass; " << frames_scored
      << " frames scored per run after the window's first full block, the cast classified "
         "online; heads and K/V of the first seed, agreement the mean over seeds.\n";
  return out.str();
}

std::string TimestepStudy::plot(const std::string& png) const {
  std::vector<StudyBar> bars;
  for (const TimestepRow& r : rows)
    bars.push_back({row_name(r), 100.0 * r.agreement, r.psnr_vs_dense});
  return plot_bar_pair(png, "HeadCast classified at each denoising step", bars,
                       {"cast agreement with step 0, %", 105.0}, {"PSNR vs dense, dB", 0.0});
}

}  // namespace wc::eval
