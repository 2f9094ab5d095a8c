// One policy's run on one seed as HeadCast's studies score it (Note [Threshold study], Note
// [Archetype study]).
#pragma once

#include <ATen/ATen.h>

#include <cstdint>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "engine/attention/headcast/head_type.h"
#include "engine/eval/eval_options.h"
#include "engine/game/game.h"

namespace wc::eval {

// The frames after the first `skip` of a run, their times, what a player sees in them, and the
// policy's K/V and cast at the end.
struct StudyRun {
  std::vector<at::Tensor> frames;  // uint8 [H, W, 4]
  std::vector<double> ms;          // each scored frame's step time
  int64_t sprite = 0, hud = 0;     // scored frames whose sprite is a pose, whose HUD reads
  int64_t cache_bytes = 0;
  std::vector<std::vector<attention::HeadType>> cast;  // [layer][head]
  std::map<std::string, int> heads_by_type;
};

// `policy` playing `actions` from `seed` under `options`; wc::Error naming `where` for a model
// that is not a world-model session.
StudyRun play_study_run(const EvalOptions& options, const std::string& policy, uint64_t seed,
                        const std::vector<game::Action>& actions, int64_t skip,
                        const std::string& where);

// Whether the eval's HeadCast settings (the model's under --settings) force a cast: a study that
// classifies its own refuses them.
bool forces_a_cast(const EvalOptions& options);

// One bar a row in each of two panels side by side, as the studies plot their rows (gnuplot-nox).
struct BarPanel {
  std::string ylabel;
  double ymax = 0.0;  // 0: as high as the bars
};
struct StudyBar {
  std::string name;
  double left = 0.0, right = 0.0;
};
// Returns `png`, or why no plot was made.
std::string plot_bar_pair(const std::string& png, const std::string& title,
                          const std::vector<StudyBar>& bars, const BarPanel& left,
                          const BarPanel& right);

// `value` through printf's `format` (one double conversion), as the studies print figures.
std::string formatted(double value, const char* format);

// What a study reports of one policy's runs pooled over its seeds.
struct StudyFigures {
  int64_t cache_bytes = 0;      // K/V held at the end of the first seed's run
  double ms_per_frame = 0.0;    // median over the scored frames of every seed
  double speed_vs_dense = 0.0;  // dense's median frame time / this one's
  double psnr_vs_dense = 0.0;   // mean over the scored frames of every seed
  double sprite_share = 0.0;    // scored frames whose sprite is one of the game's poses
  double hud_share = 0.0;       // ... whose HUD digits read as a count

  // The fields above by name.
  nlohmann::json to_json() const;
  // The table's cells from "K/V held" to "HUD": " 25.8 MiB | 707.9 | 0.97× | 18.0 dB | ... |".
  std::string table_cells() const;
  // Dense's row, `blank` empty cells after its name: its speed 1.00× and no PSNR.
  std::string dense_row(int blank) const;
};

// One policy's runs, a seed at a time, pooled.
class StudyPool {
 public:
  // A seed's run, its PSNR against `dense`'s run on the same seed (none for dense itself).
  void add(const StudyRun& run, const StudyRun* dense = nullptr);
  // Only the frame times of `run` (dense timed again after the other runs: the first run of a
  // process pays its warm-up).
  void add_times(const StudyRun& run);
  // The pool's figures, speed against `dense_ms_per_frame` (0: against its own, as dense).
  StudyFigures figures(double dense_ms_per_frame = 0.0) const;

 private:
  std::vector<double> ms_;
  double psnr_sum_ = 0.0;
  int64_t frames_ = 0, sprite_ = 0, hud_ = 0;
  int64_t first_cache_bytes_ = -1;
};

}  // namespace wc::eval
