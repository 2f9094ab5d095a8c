// See cast_stability.h and Note [Cast stability].
#include "engine/eval/cast_stability.h"

#include <algorithm>
#include <array>
#include <cstdio>
#include <map>
#include <sstream>

#include "engine/core/error.h"
#include "engine/core/gnuplot.h"
#include "engine/eval/eval_session.h"

namespace wc::eval {
namespace {

constexpr const char* kWhere = "study cast-stability";
constexpr uint64_t kWalkSalt = 0x63617374ull;  // "cast"

struct RunSpec {
  std::string factor;
  uint64_t seed;
  int64_t block;
  int step;
  int walk;
};

std::vector<RunSpec> one_factor_at_a_time(const EvalOptions& options,
                                          const CastStudyOptions& study) {
  const std::vector<int64_t> blocks =
      study.classify_blocks.empty() ? std::vector<int64_t>{-1} : study.classify_blocks;
  const RunSpec reference{"reference", options.seeds.front(), blocks.front(),
                          study.classify_steps.front(), 0};
  std::vector<RunSpec> specs{reference};
  for (size_t i = 1; i < options.seeds.size(); ++i) {
    RunSpec spec = reference;
    spec.factor = "seed";
    spec.seed = options.seeds[i];
    specs.push_back(spec);
  }
  for (size_t i = 1; i < blocks.size(); ++i) {
    RunSpec spec = reference;
    spec.factor = "block";
    spec.block = blocks[i];
    specs.push_back(spec);
  }
  for (size_t i = 1; i < study.classify_steps.size(); ++i) {
    RunSpec spec = reference;
    spec.factor = "step";
    spec.step = study.classify_steps[i];
    specs.push_back(spec);
  }
  for (int walk = 1; walk < study.walks; ++walk) {
    RunSpec spec = reference;
    spec.factor = "walk";
    spec.walk = walk;
    specs.push_back(spec);
  }
  return specs;
}

nlohmann::json run_settings(const EvalOptions& options, const RunSpec& spec) {
  nlohmann::json settings = options.settings.count("headcast") ? options.settings.at("headcast")
                                                               : nlohmann::json::object();
  settings["classify_block"] = spec.block;
  settings["classify_step"] = spec.step;
  return settings;
}

CastRun play_until_cast(const EvalOptions& base, const RunSpec& spec) {
  EvalOptions options = base;
  options.settings["headcast"] = run_settings(base, spec);
  const int f = options.config.frames_per_block;
  const int64_t window = eval_window_frames(options);
  const int64_t block = spec.block >= 1 ? spec.block : (window + f - 1) / f;
  // The cast applies after the classifying block's commit; a few blocks of margin.
  const int64_t limit = (block + 4) * f;
  const std::vector<game::Action> actions =
      eval_actions(options, spec.seed ^ (kWalkSalt * static_cast<uint64_t>(spec.walk + 1)),
                   static_cast<int>(limit));
  std::unique_ptr<FrameSource> source = make_eval_source(options, "headcast", spec.seed);
  rollout::Session* session = session_of(*source);
  if (session == nullptr) throw Error(kWhere, "the model under study is not a world-model session");
  source->reset(spec.seed);
  CastRun run;
  run.factor = spec.factor;
  run.seed = spec.seed;
  run.classify_block = spec.block;
  run.classify_step = spec.step;
  run.walk = spec.walk;
  for (game::Action action : actions) {
    source->step(action);
    ++run.frames;
    const attention::PolicyStats stats = session->policy().stats();
    if (!stats.classified) continue;
    run.cast = stats.cast();
    return run;
  }
  throw Error(kWhere, "seed " + std::to_string(spec.seed) + ", block " +
                          std::to_string(spec.block) + ": HeadCast had not cast every head after " +
                          std::to_string(limit) + " frames");
}

}  // namespace

void validate(const CastStudyOptions& study, const EvalOptions& options) {
  if (options.seeds.empty()) throw Error(kWhere, "no seed to study");
  for (int64_t block : study.classify_blocks) {
    if (block < 1) {
      throw Error(kWhere, "classification block " + std::to_string(block) +
                              ": must be at least 1 (block 0 has no history to classify on)");
    }
  }
  if (study.classify_steps.empty()) throw Error(kWhere, "no denoising step to classify at");
  for (int step : study.classify_steps) {
    if (step < 0) throw Error(kWhere, "denoising step " + std::to_string(step) + ": must be >= 0");
  }
  if (study.walks < 1) throw Error(kWhere, "walks: must be at least 1");
}

double cast_agreement(const std::vector<std::vector<attention::HeadType>>& a,
                      const std::vector<std::vector<attention::HeadType>>& b) {
  if (a.size() != b.size()) throw Error(kWhere, "casts of different layer counts");
  int64_t same = 0, heads = 0;
  for (size_t l = 0; l < a.size(); ++l) {
    if (a[l].size() != b[l].size()) throw Error(kWhere, "casts of different head counts");
    for (size_t h = 0; h < a[l].size(); ++h) {
      same += a[l][h] == b[l][h];
      ++heads;
    }
  }
  return heads == 0 ? 1.0 : static_cast<double>(same) / static_cast<double>(heads);
}

CastStability run_cast_stability(const EvalOptions& options, const CastStudyOptions& study) {
  validate(options);
  validate(study, options);
  CastStability result;
  const std::vector<RunSpec> specs = one_factor_at_a_time(options, study);
  result.settings = run_settings(options, specs.front());
  for (const RunSpec& spec : specs) {
    report_progress(options, std::string(kWhere) + ": " + spec.factor + ", seed " +
                                 std::to_string(spec.seed) + ", block " +
                                 std::to_string(spec.block) + ", step " +
                                 std::to_string(spec.step) + ", walk " + std::to_string(spec.walk));
    CastRun run = play_until_cast(options, spec);
    if (!result.runs.empty()) run.agreement = cast_agreement(result.runs.front().cast, run.cast);
    result.runs.push_back(std::move(run));
  }
  double sum = 0.0;
  for (const char* name : {"seed", "block", "step", "walk"}) {
    CastStability::Factor factor{name, 0.0, 0};
    for (const CastRun& run : result.runs) {
      if (run.factor != name) continue;
      factor.agreement += run.agreement;
      ++factor.runs;
      sum += run.agreement;
    }
    if (factor.runs == 0) continue;
    factor.agreement /= factor.runs;
    result.factors.push_back(factor);
  }
  result.overall = result.runs.size() > 1 ? sum / static_cast<double>(result.runs.size() - 1) : 1.0;
  const auto& reference = result.runs.front().cast;
  for (size_t l = 0; l < reference.size(); ++l) {
    std::vector<double> heads;
    for (size_t h = 0; h < reference[l].size(); ++h) {
      std::array<int, attention::kHeadTypeCount> counts{};
      for (const CastRun& run : result.runs) ++counts[static_cast<size_t>(run.cast[l][h])];
      const int mode = *std::max_element(counts.begin(), counts.end());
      heads.push_back(static_cast<double>(mode) / static_cast<double>(result.runs.size()));
    }
    result.head_agreement.push_back(std::move(heads));
  }
  return result;
}

nlohmann::json CastStability::to_json() const {
  nlohmann::json run_rows = nlohmann::json::array();
  for (const CastRun& run : runs) {
    nlohmann::json cast = nlohmann::json::array();
    for (const auto& layer : run.cast) {
      nlohmann::json names = nlohmann::json::array();
      for (attention::HeadType type : layer) names.push_back(attention::head_type_name(type));
      cast.push_back(names);
    }
    run_rows.push_back({{"factor", run.factor},
                        {"seed", run.seed},
                        {"classify_block", run.classify_block},
                        {"classify_step", run.classify_step},
                        {"walk", run.walk},
                        {"frames", run.frames},
                        {"agreement", run.agreement},
                        {"heads_by_type", attention::head_type_counts(run.cast)},
                        {"cast", cast}});
  }
  nlohmann::json factor_rows = nlohmann::json::array();
  for (const Factor& factor : factors) {
    factor_rows.push_back(
        {{"factor", factor.name}, {"agreement", factor.agreement}, {"runs", factor.runs}});
  }
  return {{"study", "cast-stability"},
          {"settings", settings},
          {"runs", run_rows},
          {"factors", factor_rows},
          {"head_agreement", head_agreement},
          {"overall", overall}};
}

std::string CastStability::markdown() const {
  std::ostringstream out;
  char line[256];
  out << "| factor | agreement with the reference cast | runs |\n| --- | --- | --- |\n";
  for (const Factor& factor : factors) {
    std::snprintf(line, sizeof line, "| %s | %.1f %% | %d |\n", factor.name.c_str(),
                  100.0 * factor.agreement, factor.runs);
    out << line;
  }
  std::snprintf(line, sizeof line, "| every run | %.1f %% | %zu |\n\n", 100.0 * overall,
                runs.empty() ? size_t{0} : runs.size() - 1);
  out << line;
  out << "| run | seed | block | step | walk | frames | heads by type | agreement |\n"
         "| --- | --- | --- | --- | --- | --- | --- | --- |\n";
  for (const CastRun& run : runs) {
    std::snprintf(line, sizeof line, "| %s | %llu | %lld | %d | %d | %lld | %s | %.1f %% |\n",
                  run.factor.c_str(), static_cast<unsigned long long>(run.seed),
                  static_cast<long long>(run.classify_block), run.classify_step, run.walk,
                  static_cast<long long>(run.frames),
                  attention::head_type_counts_text(attention::head_type_counts(run.cast)).c_str(),
                  100.0 * run.agreement);
    out << line;
  }
  out << "\nBlock -1: the window's first full block (the policy's default).\n";
  return out.str();
}

std::string CastStability::plot(const std::string& png) const {
  if (head_agreement.empty()) return "no plot: nothing to draw";
  std::ostringstream data;
  for (const auto& layer : head_agreement) {
    for (size_t h = 0; h < layer.size(); ++h) data << (h ? " " : "") << layer[h];
    data << "\n";
  }
  const auto script = [&](const std::string& data_file) {
    std::ostringstream gp;
    gp << "set terminal pngcairo size 900,600\nset output " << gnuplot_quoted(png) << "\n"
       << "set title 'HeadCast: share of runs giving each head its most frequent type'\n"
       << "set xlabel 'head'\nset ylabel 'layer'\nset cbrange [0:1]\n"
       << "set xrange [-0.5:" << head_agreement.front().size() - 0.5 << "]\n"
       << "set yrange [-0.5:" << head_agreement.size() - 0.5 << "]\n"
       << "set palette defined (0 '#b2182b', 0.5 '#f7f7f7', 1 '#2166ac')\n"
       << "plot " << gnuplot_quoted(data_file) << " matrix with image notitle\n";
    return gp.str();
  };
  if (auto failed = run_gnuplot(data.str(), script)) return *failed;
  return png;
}

}  // namespace wc::eval
