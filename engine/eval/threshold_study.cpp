// See threshold_study.h and Note [Threshold study].
#include "engine/eval/threshold_study.h"

#include <algorithm>
#include <cstdio>
#include <map>
#include <sstream>

#include "engine/core/error.h"
#include "engine/core/gnuplot.h"
#include "engine/eval/eval_session.h"
#include "engine/eval/overlay_glyphs.h"
#include "engine/eval/study_run.h"

namespace wc::eval {
namespace {

constexpr const char* kWhere = "study thresholds";

}  // namespace

void validate(const ThresholdStudyOptions& study, const EvalOptions& options) {
  if (options.seeds.empty()) throw Error(kWhere, "no seed to study");
  if (study.thetas.empty() || study.theta_scs.empty()) {
    throw Error(kWhere, "the grid is empty: give at least one theta and one theta_sc");
  }
  for (double theta : study.thetas) {
    if (!(theta >= 0.0 && theta <= 1.0)) {
      throw Error(kWhere, "theta " + formatted(theta, "%g") +
                              ": must be in [0, 1] (the share of the full output a path keeps)");
    }
  }
  for (double theta_sc : study.theta_scs) {
    if (!(theta_sc >= -10.0 && theta_sc <= 1.0)) {
      throw Error(kWhere, "theta_sc " + formatted(theta_sc, "%g") + ": must be in [-10, 1]");
    }
  }
  if (study.frames < 1) throw Error(kWhere, "frames: must be at least 1");
}

ThresholdStudy run_threshold_study(const EvalOptions& options, const ThresholdStudyOptions& study) {
  validate(options);
  validate(study, options);
  const int64_t f = options.config.frames_per_block;
  // The cast is decided on the window's first full block and applies from the next one.
  const int64_t skip = eval_window_frames(options) + f;
  const int64_t steps = skip + study.frames;
  const nlohmann::json base = eval_policy_settings(options, "headcast");

  ThresholdStudy result;
  result.frames_scored = study.frames;
  result.settings = base;
  StudyPool dense_pool;
  std::vector<StudyPool> pools(study.thetas.size() * study.theta_scs.size());
  result.cells.resize(pools.size());
  for (uint64_t seed : options.seeds) {
    const std::vector<game::Action> actions = eval_actions(options, seed, static_cast<int>(steps));
    report_progress(options, std::string(kWhere) + ": seed " + std::to_string(seed) + ", dense");
    const StudyRun dense = play_study_run(options, "dense", seed, actions, skip, kWhere);
    dense_pool.add(dense);
    size_t k = 0;
    for (double theta : study.thetas) {
      for (double theta_sc : study.theta_scs) {
        EvalOptions cell = options;
        nlohmann::json settings = base;
        settings["theta_dummy"] = theta;
        settings["theta_sink"] = theta;
        settings["theta_spatial"] = theta;
        settings["theta_spatial_score"] = theta_sc;
        cell.settings["headcast"] = settings;
        report_progress(options, std::string(kWhere) + ": seed " + std::to_string(seed) +
                                     ", theta " + formatted(theta, "%g") + ", theta_sc " +
                                     formatted(theta_sc, "%g"));
        const StudyRun run = play_study_run(cell, "headcast", seed, actions, skip, kWhere);
        ThresholdCell& out = result.cells[k];
        out.theta = theta;
        out.theta_sc = theta_sc;
        if (seed == options.seeds.front()) out.heads_by_type = run.heads_by_type;
        pools[k].add(run, &dense);
        ++k;
      }
    }
    // Dense again after the grid: the first run of a process pays for its warm-up (allocator,
    // BLAS threads), so dense's time is the pool of a run before and a run after the cells.
    dense_pool.add_times(play_study_run(options, "dense", seed, actions, skip, kWhere));
  }
  result.dense = dense_pool.figures();
  for (size_t k = 0; k < pools.size(); ++k) {
    static_cast<StudyFigures&>(result.cells[k]) = pools[k].figures(result.dense.ms_per_frame);
  }
  return result;
}

nlohmann::json ThresholdStudy::to_json() const {
  nlohmann::json grid = nlohmann::json::array();
  for (const ThresholdCell& c : cells) {
    nlohmann::json cell = c.to_json();
    cell["theta"] = c.theta;
    cell["theta_sc"] = c.theta_sc;
    cell["heads_by_type"] = c.heads_by_type;
    grid.push_back(cell);
  }
  return {{"study", "thresholds"},
          {"settings", settings},
          {"frames_scored", frames_scored},
          {"dense", dense.to_json()},
          {"cells", grid}};
}

std::string ThresholdStudy::markdown() const {
  std::ostringstream out;
  out << "| θ | θ_sc | heads by type | K/V held | ms/frame | speed vs dense | PSNR vs dense | "
         "sprite | HUD |\n| --- | --- | --- | --- | --- | --- | --- | --- | --- |\n"
      << dense.dense_row(2);
  for (const ThresholdCell& c : cells) {
    const std::string heads = attention::head_type_counts_text(c.heads_by_type);
    out << "| " << formatted(c.theta, "%g") << " | " << formatted(c.theta_sc, "%g") << " | "
        << heads << " |" << c.table_cells() << "\n";
  }
  out << "\n"
      << frames_scored
      << " frames scored per run after the cast applies; heads and K/V of the first seed.\n";
  return out.str();
}

std::string ThresholdStudy::plot(const std::string& png) const {
  if (cells.empty()) return "no plot: nothing to draw";
  std::ostringstream data;
  for (const ThresholdCell& c : cells) {
    data << c.speed_vs_dense << " " << c.psnr_vs_dense << " " << 100.0 * c.sprite_share << " \""
         << formatted(c.theta, "%g") << "/" << formatted(c.theta_sc, "%g") << "\"\n";
  }
  const auto script = [&](const std::string& data_file) {
    const std::string file = gnuplot_quoted(data_file);
    std::ostringstream gp;
    gp << "set terminal pngcairo size 1200,500 noenhanced\nset output " << gnuplot_quoted(png)
       << "\nset multiplot layout 1,2 title 'HeadCast thresholds (theta/theta_sc) against dense'\n"
       << "set grid\nset xlabel 'speed vs dense'\nset offsets graph 0.08, graph 0.08, graph "
          "0.08, graph 0.08\n"
       << "set ylabel 'PSNR vs dense, dB'\nplot " << file
       << " using 1:2 with points pt 7 notitle, '' using 1:2:4 with labels offset 0,1 notitle\n"
       << "set ylabel 'frames with a whole sprite, %'\nset yrange [0:105]\nplot " << file
       << " using 1:3 with points pt 7 notitle, '' using 1:3:4 with labels offset 0,1 notitle\n"
       << "unset multiplot\n";
    return gp.str();
  };
  if (auto failed = run_gnuplot(data.str(), script)) return *failed;
  return png;
}

}  // namespace wc::eval
