// See study_run.h.
#include "engine/eval/study_run.h"

#include <algorithm>
#include <memory>

#include "engine/core/error.h"
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

double mean_psnr_against(const StudyRun& run, const StudyRun& reference) {
  const size_t n = std::min(run.frames.size(), reference.frames.size());
  double sum = 0.0;
  for (size_t i = 0; i < n; ++i) sum += psnr(run.frames[i], reference.frames[i]);
  return n > 0 ? sum / static_cast<double>(n) : 0.0;
}

}  // namespace wc::eval
