// See responsiveness.h. Player-like random actions per seed; the Session and the reference game
// step together; phase correlation between consecutive frames, screen overlays left out.
#include "engine/eval/responsiveness.h"

#include <algorithm>
#include <vector>

#include "engine/eval/eval_session.h"
#include "engine/eval/frame_tensor.h"
#include "engine/eval/phase_correlation.h"
#include "engine/eval/reference_run.h"

namespace wc::eval {
namespace {

constexpr uint64_t kActionSalt = 0x726573706F6E64ull;  // "respond"

struct Counts {
  int64_t scored = 0, correct = 0, exact = 0, truth_correct = 0;
  // Where the scored steps went wrong (Note [Responsiveness breakdown]).
  int64_t scored_still = 0, hold_first = 0, hold_first_correct = 0, early = 0, early_correct = 0;
  int64_t blocked = 0, blocked_still = 0, idle = 0, idle_still = 0;
  double peak_sum = 0.0;
  // Detail (mean_gradient) of the generated and the true frames, first quarter and after.
  double early_detail = 0.0, early_true_detail = 0.0, late_detail = 0.0, late_true_detail = 0.0;
  int64_t pairs = 0;

  void add(const Counts& o) {
    scored += o.scored, correct += o.correct, exact += o.exact, truth_correct += o.truth_correct;
    scored_still += o.scored_still, hold_first += o.hold_first;
    hold_first_correct += o.hold_first_correct, early += o.early, early_correct += o.early_correct;
    blocked += o.blocked, blocked_still += o.blocked_still, idle += o.idle;
    idle_still += o.idle_still, peak_sum += o.peak_sum, pairs += o.pairs;
    early_detail += o.early_detail, early_true_detail += o.early_true_detail;
    late_detail += o.late_detail, late_true_detail += o.late_true_detail;
  }
};

nlohmann::json share(int64_t part, int64_t whole) {
  if (whole == 0) return nullptr;
  return static_cast<double>(part) / static_cast<double>(whole);
}

nlohmann::json ratio(double part, double whole) {
  if (whole <= 0.0) return nullptr;
  return part / whole;
}

}  // namespace

nlohmann::json eval_responsiveness(const EvalOptions& options) {
  auto session = make_eval_source(options, options.policy, options.seeds.front());
  const int width = session->width(), height = session->height();
  const PhaseCorrelationOptions correlation = scroll_estimator(options, width, height);

  Counts total;
  nlohmann::json per_seed = nlohmann::json::array();
  for (uint64_t seed : options.seeds) {
    report_progress(options, "responsiveness: seed " + std::to_string(seed));
    session->reset(seed);
    ReferenceRun truth(width, height, seed, options.seed_frames);
    at::Tensor previous = current_frame(*session), previous_true = truth.frame();
    Counts counts;
    const std::vector<game::Action> actions =
        eval_actions(options, seed ^ kActionSalt, options.responsiveness_frames);
    const size_t early_steps = actions.size() / 4;
    for (size_t i = 0; i < actions.size(); ++i) {
      const game::Action action = actions[i];
      session->step(action);
      const bool moved = truth.step(action);
      at::Tensor frame = current_frame(*session), frame_true = truth.frame();
      const Shift shift = estimate_shift(previous, frame, correlation);
      const bool still = shift.dx == 0 && shift.dy == 0;
      counts.peak_sum += shift.peak;
      (i < early_steps ? counts.early_detail : counts.late_detail) += mean_gradient(frame);
      (i < early_steps ? counts.early_true_detail : counts.late_true_detail) +=
          mean_gradient(frame_true);
      ++counts.pairs;
      if (action == game::Action::kNone) {
        ++counts.idle;
        counts.idle_still += still;
      } else if (moved) {
        const bool correct = camera_direction(shift) == action;
        const bool first_of_hold = i == 0 || actions[i - 1] != action;
        ++counts.scored;
        counts.correct += correct;
        counts.scored_still += still;
        counts.hold_first += first_of_hold;
        counts.hold_first_correct += first_of_hold && correct;
        counts.early += i < early_steps;
        counts.early_correct += i < early_steps && correct;
        const Shift expected = content_shift_of(action, game::kPlayerSpeed);
        counts.exact += shift.dx == expected.dx && shift.dy == expected.dy;
        counts.truth_correct +=
            camera_direction(estimate_shift(previous_true, frame_true, correlation)) == action;
      } else {
        ++counts.blocked;
        counts.blocked_still += still;
      }
      previous = std::move(frame);
      previous_true = std::move(frame_true);
    }
    per_seed.push_back({{"seed", seed},
                        {"share", share(counts.correct, counts.scored)},
                        {"scored_steps", counts.scored}});
    total.add(counts);
  }
  return {{"policy", options.policy},
          {"frames_per_seed", options.responsiveness_frames},
          {"share", share(total.correct, total.scored)},
          {"scored_steps", total.scored},
          {"correct_steps", total.correct},
          {"exact_shift_share", share(total.exact, total.scored)},
          {"still_share", share(total.scored_still, total.scored)},
          {"hold_first_share", share(total.hold_first_correct, total.hold_first)},
          {"hold_first_steps", total.hold_first},
          {"hold_later_share",
           share(total.correct - total.hold_first_correct, total.scored - total.hold_first)},
          {"early_share", share(total.early_correct, total.early)},
          {"early_steps", total.early},
          {"late_share", share(total.correct - total.early_correct, total.scored - total.early)},
          {"early_detail_ratio", ratio(total.early_detail, total.early_true_detail)},
          {"late_detail_ratio", ratio(total.late_detail, total.late_true_detail)},
          {"estimator_share_on_truth", share(total.truth_correct, total.scored)},
          {"blocked_steps", total.blocked},
          {"blocked_still_share", share(total.blocked_still, total.blocked)},
          {"idle_steps", total.idle},
          {"idle_still_share", share(total.idle_still, total.idle)},
          {"mean_peak", total.peak_sum / static_cast<double>(std::max<int64_t>(total.pairs, 1))},
          {"max_shift", options.max_shift},
          {"scroll_pixels", game::kPlayerSpeed},
          {"per_seed", per_seed}};
}

}  // namespace wc::eval
