// See overhead_study.h and Note [Overhead study].
#include "engine/eval/overhead_study.h"

#include <c10/core/ScalarType.h>

#include <sstream>

#include "bench/model_bench.h"
#include "engine/core/error.h"
#include "engine/core/gnuplot.h"
#include "engine/eval/eval_session.h"
#include "engine/eval/study_run.h"

namespace wc::eval {
namespace {

constexpr const char* kWhere = "study overhead";

std::string resolution_name(const OverheadRow& row) {
  return row.resolution.empty() ? "default" : row.resolution;
}

}  // namespace

double classification_share(double classify_ms, double block_ms, int64_t blocks) {
  const double total = classify_ms + static_cast<double>(blocks) * block_ms;
  return total > 0.0 ? classify_ms / total : 0.0;
}

void validate(const OverheadStudyOptions& study, const EvalOptions& options) {
  if (study.resolutions.empty()) throw Error(kWhere, "no resolution to study");
  for (const std::string& name : study.resolutions) {
    if (!name.empty() && options.config.resolutions.count(name) == 0) {
      throw Error(kWhere, "resolution '" + name + "': the config " + options.config.name +
                              " has no such resolution");
    }
  }
  if (study.rollout_frames.empty()) throw Error(kWhere, "no rollout length to report");
  for (int64_t frames : study.rollout_frames) {
    if (frames < 1) throw Error(kWhere, "rollout frames: must be at least 1");
  }
  if (study.warmup_blocks < 1) throw Error(kWhere, "warm-up blocks: must be at least 1");
  if (study.timed_blocks < 1) throw Error(kWhere, "timed blocks: must be at least 1");
  if (forces_a_cast(options)) {
    throw Error(kWhere, "the settings force a cast, so nothing is classified (drop \"cast\")");
  }
}

OverheadStudy run_overhead_study(const EvalOptions& options, const OverheadStudyOptions& study) {
  validate(study, options);
  rollout::ModelBenchOptions bench;
  bench.config = options.config;
  bench.resolutions = study.resolutions;
  bench.device = options.device;
  bench.dtype = options.dtype.value_or(options.device.is_cuda() ? at::kBFloat16 : at::kFloat);
  bench.warmup_blocks = study.warmup_blocks;
  bench.timed_blocks = study.timed_blocks;
  bench.split_blocks = 0;
  bench.seed = options.weights_seed;
  const nlohmann::json settings = eval_policy_settings(options, "headcast");
  bench.policies = {{"headcast", settings}, {"dense", eval_policy_settings(options, "dense")}};
  const std::vector<rollout::ModelBenchRow> rows =
      rollout::run_model_bench(bench, [&](const rollout::ModelBenchRow& row) {
        report_progress(options, std::string(kWhere) + ": " + row.resolution + ", " + row.policy +
                                     " " + formatted(row.block_ms_median, "%.1f") + " ms a block");
      });

  OverheadStudy result;
  result.config = options.config.name;
  result.device = bench.device.str();
  result.dtype = c10::toString(bench.dtype);
  result.rollout_frames = study.rollout_frames;
  result.settings = settings;
  const int f = options.config.frames_per_block;
  for (size_t i = 0; i + 1 < rows.size(); i += 2) {
    const rollout::ModelBenchRow& headcast = rows[i];
    const rollout::ModelBenchRow& dense = rows[i + 1];
    if (headcast.classify_ms <= 0.0) {
      throw Error(kWhere, "HeadCast classified nothing in " + std::to_string(study.warmup_blocks) +
                              " warm-up blocks at " + headcast.resolution +
                              " (its window is longer: raise the warm-up)");
    }
    OverheadRow row;
    row.resolution = headcast.resolution;
    row.tokens_per_block = headcast.tokens_per_block;
    row.frames_per_block = f;
    row.classify_ms = headcast.classify_ms;
    row.headcast_block_ms = headcast.block_ms_median;
    row.dense_block_ms = dense.block_ms_median;
    for (int64_t frames : study.rollout_frames) {
      row.shares.push_back(
          classification_share(row.classify_ms, row.headcast_block_ms, (frames + f - 1) / f));
    }
    result.rows.push_back(row);
  }
  return result;
}

nlohmann::json OverheadStudy::to_json() const {
  nlohmann::json out_rows = nlohmann::json::array();
  for (const OverheadRow& r : rows) {
    out_rows.push_back({{"resolution", r.resolution},
                        {"tokens_per_block", r.tokens_per_block},
                        {"frames_per_block", r.frames_per_block},
                        {"classify_ms", r.classify_ms},
                        {"headcast_block_ms", r.headcast_block_ms},
                        {"dense_block_ms", r.dense_block_ms},
                        {"classify_in_dense_blocks",
                         r.dense_block_ms > 0.0 ? nlohmann::json(r.classify_ms / r.dense_block_ms)
                                                : nlohmann::json()},
                        {"shares", r.shares}});
  }
  return {{"study", "overhead"}, {"config", config},     {"device", device},
          {"dtype", dtype},      {"settings", settings}, {"rollout_frames", rollout_frames},
          {"rows", out_rows}};
}

std::string OverheadStudy::markdown() const {
  std::ostringstream out;
  out << "| resolution | tokens a block | classification ms | in dense blocks | HeadCast ms a "
         "block";
  for (int64_t frames : rollout_frames) out << " | share of " << frames << " frames";
  out << " |\n| --- | --- | --- | --- | ---";
  for (size_t i = 0; i < rollout_frames.size(); ++i) out << " | ---";
  out << " |\n";
  for (const OverheadRow& r : rows) {
    out << "| " << resolution_name(r) << " | " << r.tokens_per_block << " | "
        << formatted(r.classify_ms, "%.1f") << " | "
        << formatted(r.dense_block_ms > 0.0 ? r.classify_ms / r.dense_block_ms : 0.0, "%.2f")
        << " | " << formatted(r.headcast_block_ms, "%.1f");
    for (double share : r.shares) out << " | " << formatted(100.0 * share, "%.2f %%");
    out << " |\n";
  }
  out << "\n"
      << config << ", " << device << ", " << dtype
      << ", random weights; the classification is HeadCast's \"classify\" path over the warm-up, "
         "block times are medians after it.\n";
  return out.str();
}

std::string OverheadStudy::plot(const std::string& png) const {
  if (rows.empty()) return "no plot: nothing to draw";
  std::ostringstream data;
  for (const OverheadRow& r : rows) {
    data << "\"" << resolution_name(r) << "\"\n";
    for (size_t i = 0; i < rollout_frames.size(); ++i) {
      data << rollout_frames[i] << " " << 100.0 * r.shares[i] << "\n";
    }
    data << "\n\n";
  }
  const auto script = [&](const std::string& data_file) {
    std::ostringstream gp;
    gp << "set terminal pngcairo size 900,500 noenhanced\nset output " << gnuplot_quoted(png)
       << "\nset title 'HeadCast classification, share of a rollout'\nset logscale x\n"
       << "set xlabel 'frames in the rollout'\nset ylabel 'share of the rollout, %'\n"
       << "set grid\nset key top right\nplot for [i=0:" << rows.size() - 1 << "] "
       << gnuplot_quoted(data_file)
       << " index i using 1:2 with linespoints title columnheader(1)\n";
    return gp.str();
  };
  if (auto failed = run_gnuplot(data.str(), script)) return *failed;
  return png;
}

}  // namespace wc::eval
