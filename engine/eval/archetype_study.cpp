// See archetype_study.h and Note [Archetype study].
#include "engine/eval/archetype_study.h"

#include <set>
#include <sstream>

#include "engine/attention/headcast/head_type.h"
#include "engine/core/error.h"
#include "engine/eval/eval_session.h"
#include "engine/eval/study_run.h"

namespace wc::eval {
namespace {

constexpr const char* kWhere = "study archetypes";

using attention::HeadType;
using Cast = std::vector<std::vector<HeadType>>;

// The archetypes whose heads a row makes Global, in the table's order.
constexpr HeadType kCheapTypes[] = {HeadType::kSink, HeadType::kDummy, HeadType::kSpatial};

// `cast` with every head of `type` made Global.
Cast made_global(Cast cast, HeadType type) {
  for (auto& layer : cast) {
    for (HeadType& head : layer) {
      if (head == type) head = HeadType::kGlobal;
    }
  }
  return cast;
}

// HeadCast settings that force `cast` from the first frame.
nlohmann::json forcing(nlohmann::json settings, const Cast& cast) {
  nlohmann::json layers = nlohmann::json::array();
  for (const auto& layer : cast) {
    nlohmann::json heads = nlohmann::json::array();
    for (HeadType head : layer) heads.push_back(attention::head_type_name(head));
    layers.push_back(heads);
  }
  settings["cast"] = {{"layers", layers}};
  return settings;
}

std::string row_name(const ArchetypeRow& row) {
  return row.made_global.empty() ? "as cast" : row.made_global + " made global";
}

}  // namespace

void validate(const ArchetypeStudyOptions& study, const EvalOptions& options) {
  if (options.seeds.empty()) throw Error(kWhere, "no seed to study");
  if (study.frames < 1) throw Error(kWhere, "frames: must be at least 1");
  if (forces_a_cast(options)) {
    throw Error(kWhere, "the settings force a cast; the study classifies its own (drop \"cast\")");
  }
}

ArchetypeStudy run_archetype_study(const EvalOptions& options, const ArchetypeStudyOptions& study) {
  validate(options);
  validate(study, options);
  const int64_t skip = eval_window_frames(options) + options.config.frames_per_block;
  const int64_t steps = skip + study.frames;
  const nlohmann::json base = eval_policy_settings(options, "headcast");

  // Each seed's walk, dense run and classified cast first: the rows are the archetypes any
  // seed's cast uses.
  struct Seed {
    std::vector<game::Action> actions;
    StudyRun dense;
    Cast cast;
  };
  std::vector<Seed> seeds;
  StudyPool dense_pool;
  std::set<HeadType> used;
  ArchetypeStudy result;
  result.settings = base;
  result.frames_scored = study.frames;
  for (uint64_t seed : options.seeds) {
    Seed s;
    s.actions = eval_actions(options, seed, static_cast<int>(steps));
    report_progress(options, std::string(kWhere) + ": seed " + std::to_string(seed) + ", dense");
    s.dense = play_study_run(options, "dense", seed, s.actions, skip, kWhere);
    dense_pool.add(s.dense);
    report_progress(options, std::string(kWhere) + ": seed " + std::to_string(seed) + ", classify");
    s.cast = play_study_run(options, "headcast", seed, s.actions, skip, kWhere).cast;
    for (const auto& layer : s.cast) used.insert(layer.begin(), layer.end());
    seeds.push_back(std::move(s));
  }

  std::vector<ArchetypeRow> rows(1);
  for (HeadType type : kCheapTypes) {
    if (used.count(type) == 0) continue;
    rows.emplace_back();
    rows.back().made_global = attention::head_type_name(type);
  }
  std::vector<StudyPool> pools(rows.size());
  for (size_t i = 0; i < seeds.size(); ++i) {
    const uint64_t seed = options.seeds[i];
    for (size_t r = 0; r < rows.size(); ++r) {
      const Cast cast =
          rows[r].made_global.empty()
              ? seeds[i].cast
              : made_global(seeds[i].cast, *attention::parse_head_type(rows[r].made_global));
      EvalOptions row_options = options;
      row_options.settings["headcast"] = forcing(base, cast);
      report_progress(options, std::string(kWhere) + ": seed " + std::to_string(seed) + ", " +
                                   row_name(rows[r]));
      const StudyRun run =
          play_study_run(row_options, "headcast", seed, seeds[i].actions, skip, kWhere);
      if (i == 0) rows[r].heads_by_type = run.heads_by_type;
      pools[r].add(run, &seeds[i].dense);
    }
    // Dense again after the rows: the process's first run pays its warm-up.
    dense_pool.add_times(play_study_run(options, "dense", seed, seeds[i].actions, skip, kWhere));
  }
  result.dense = dense_pool.figures();
  for (size_t r = 0; r < rows.size(); ++r) {
    static_cast<StudyFigures&>(rows[r]) = pools[r].figures(result.dense.ms_per_frame);
  }
  result.rows = std::move(rows);
  return result;
}

nlohmann::json ArchetypeStudy::to_json() const {
  nlohmann::json out_rows = nlohmann::json::array();
  for (const ArchetypeRow& r : rows) {
    nlohmann::json row = r.to_json();
    row["made_global"] =
        r.made_global.empty() ? nlohmann::json(nullptr) : nlohmann::json(r.made_global);
    row["heads_by_type"] = r.heads_by_type;
    out_rows.push_back(row);
  }
  return {{"study", "archetypes"},
          {"settings", settings},
          {"frames_scored", frames_scored},
          {"dense", dense.to_json()},
          {"rows", out_rows}};
}

std::string ArchetypeStudy::markdown() const {
  std::ostringstream out;
  out << "| run | heads by type | K/V held | ms/frame | speed vs dense | PSNR vs dense | sprite | "
         "HUD |\n| --- | --- | --- | --- | --- | --- | --- | --- |\n"
      << dense.dense_row(1);
  for (const ArchetypeRow& r : rows) {
    out << "| " << row_name(r) << " | " << attention::head_type_counts_text(r.heads_by_type) << " |"
        << r.table_cells() << "\n";
  }
  out << "\n"
      << frames_scored
      << " frames scored per run after the window's first full block, each cast forced from the "
         "first frame; heads and K/V of the first seed.\n";
  return out.str();
}

std::string ArchetypeStudy::plot(const std::string& png) const {
  std::vector<StudyBar> bars;
  for (const ArchetypeRow& r : rows) {
    bars.push_back({row_name(r), r.speed_vs_dense, 100.0 * r.sprite_share});
  }
  return plot_bar_pair(png, "HeadCast with each archetype made Global", bars,
                       {"speed vs dense", 0.0}, {"frames with a whole sprite, %", 105.0});
}

}  // namespace wc::eval
