// See study_run.h.
#include "engine/eval/study_run.h"

#include <algorithm>
#include <cstdio>
#include <memory>
#include <sstream>

#include "engine/core/error.h"
#include "engine/core/gnuplot.h"
#include "engine/core/timing.h"
#include "engine/eval/eval_session.h"
#include "engine/eval/overlay_glyphs.h"
#include "engine/eval/psnr.h"

namespace wc::eval {

StudyRun play_study_run(const EvalOptions& options, const std::string& policy, uint64_t seed,
                        const std::vector<game::Action>& actions, int64_t skip,
                        const std::string& where) {
  std::unique_ptr<FrameSource> source = make_eval_source(options, policy, seed);
  rollout::Session* session = session_of(*source);
  if (session == nullptr) throw Error(where, "the model under study is not a world-model session");
  source->reset(seed);
  const int width = source->width(), height = source->height();
  const game::PixelRect sprite = game::screen_overlays(width, height).front();
  StudyRun run;
  for (size_t i = 0; i < actions.size(); ++i) {
    Stopwatch clock;
    source->step(actions[i]);
    const at::Tensor frame = current_frame(*source);
    const double ms = clock.elapsed_ms();
    if (static_cast<int64_t>(i) < skip) continue;
    const uint8_t* pixels = frame.data_ptr<uint8_t>();
    run.sprite += match_player_sprite(pixels, width, height, sprite).pose;
    run.hud += hud_digits_readable(pixels, width, height);
    run.ms.push_back(ms);
    run.frames.push_back(frame.clone());
  }
  const attention::PolicyStats stats = session->policy().stats();
  run.cache_bytes = stats.total_bytes();
  run.cast = stats.cast();
  run.heads_by_type = attention::head_type_counts(run.cast);
  return run;
}

bool forces_a_cast(const EvalOptions& options) {
  const nlohmann::json settings = eval_policy_settings(options, "headcast");
  return settings.contains("cast") && !settings["cast"].is_null();
}

std::string plot_bar_pair(const std::string& png, const std::string& title,
                          const std::vector<StudyBar>& bars, const BarPanel& left,
                          const BarPanel& right) {
  if (bars.empty()) return "no plot: nothing to draw";
  std::ostringstream data;
  for (const StudyBar& bar : bars) {
    data << "\"" << bar.name << "\" " << bar.left << " " << bar.right << "\n";
  }
  const auto range = [](const BarPanel& panel) {
    return panel.ymax > 0.0 ? "set yrange [0:" + formatted(panel.ymax, "%g") + "]\n"
                            : std::string("set yrange [0:*]\n");
  };
  const auto script = [&](const std::string& data_file) {
    const std::string file = gnuplot_quoted(data_file);
    std::ostringstream gp;
    gp << "set terminal pngcairo size 1200,500 noenhanced\nset output " << gnuplot_quoted(png)
       << "\nset multiplot layout 1,2 title " << gnuplot_quoted(title) << "\n"
       << "set style data histograms\nset style fill solid 0.6\nset boxwidth 0.8\nset grid y\n"
       << "set xtics rotate by -20\n"
       << "set ylabel " << gnuplot_quoted(left.ylabel) << "\n"
       << range(left) << "plot " << file << " using 2:xtic(1) notitle\n"
       << "set ylabel " << gnuplot_quoted(right.ylabel) << "\n"
       << range(right) << "plot " << file << " using 3:xtic(1) notitle\nunset multiplot\n";
    return gp.str();
  };
  if (auto failed = run_gnuplot(data.str(), script)) return *failed;
  return png;
}

std::string formatted(double value, const char* format) {
  char text[64];
  std::snprintf(text, sizeof text, format, value);
  return text;
}

namespace {

std::string mib(int64_t bytes) {
  return formatted(static_cast<double>(bytes) / 1048576.0, "%.1f MiB");
}

}  // namespace

nlohmann::json StudyFigures::to_json() const {
  return {{"cache_bytes", cache_bytes},       {"ms_per_frame", ms_per_frame},
          {"speed_vs_dense", speed_vs_dense}, {"psnr_vs_dense", psnr_vs_dense},
          {"sprite_share", sprite_share},     {"hud_share", hud_share}};
}

std::string StudyFigures::table_cells() const {
  return " " + mib(cache_bytes) + " | " + formatted(ms_per_frame, "%.1f") + " | " +
         formatted(speed_vs_dense, "%.2f×") + " | " + formatted(psnr_vs_dense, "%.1f dB") + " | " +
         formatted(100.0 * sprite_share, "%.1f %%") + " | " +
         formatted(100.0 * hud_share, "%.1f %%") + " |";
}

std::string StudyFigures::dense_row(int blank) const {
  std::string row = "| dense |";
  for (int i = 0; i < blank; ++i) row += " |";
  return row + " " + mib(cache_bytes) + " | " + formatted(ms_per_frame, "%.1f") + " | 1.00× | | " +
         formatted(100.0 * sprite_share, "%.1f %%") + " | " +
         formatted(100.0 * hud_share, "%.1f %%") + " |\n";
}

void StudyPool::add(const StudyRun& run, const StudyRun* dense) {
  add_times(run);
  if (first_cache_bytes_ < 0) first_cache_bytes_ = run.cache_bytes;
  const int64_t n = static_cast<int64_t>(run.frames.size());
  frames_ += n;
  sprite_ += run.sprite;
  hud_ += run.hud;
  if (dense != nullptr) {
    const size_t compared = std::min(run.frames.size(), dense->frames.size());
    for (size_t i = 0; i < compared; ++i) psnr_sum_ += psnr(run.frames[i], dense->frames[i]);
  }
}

void StudyPool::add_times(const StudyRun& run) {
  ms_.insert(ms_.end(), run.ms.begin(), run.ms.end());
}

StudyFigures StudyPool::figures(double dense_ms_per_frame) const {
  const auto share = [this](int64_t part) {
    return frames_ > 0 ? static_cast<double>(part) / static_cast<double>(frames_) : 0.0;
  };
  StudyFigures f;
  f.cache_bytes = std::max<int64_t>(0, first_cache_bytes_);
  f.ms_per_frame = median(ms_);
  const double against = dense_ms_per_frame > 0.0 ? dense_ms_per_frame : f.ms_per_frame;
  f.speed_vs_dense = f.ms_per_frame > 0.0 ? against / f.ms_per_frame : 0.0;
  f.psnr_vs_dense = frames_ > 0 ? psnr_sum_ / static_cast<double>(frames_) : 0.0;
  f.sprite_share = share(sprite_);
  f.hud_share = share(hud_);
  return f;
}

}  // namespace wc::eval
