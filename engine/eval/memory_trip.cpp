// See memory_trip.h.
#include "engine/eval/memory_trip.h"

#include <algorithm>
#include <functional>
#include <set>
#include <utility>
#include <vector>

#include "engine/eval/eval_session.h"
#include "engine/eval/phase_correlation.h"
#include "engine/eval/player_actions.h"
#include "engine/eval/psnr.h"
#include "engine/eval/reference_run.h"

namespace wc::eval {
namespace {

constexpr int kUnboundedSteps = 32;

}  // namespace

game::Action free_trip_direction(const ReferenceRun& start, int steps) {
  for (game::Action candidate :
       {game::Action::kRight, game::Action::kLeft, game::Action::kDown, game::Action::kUp}) {
    ReferenceRun probe = start;
    if (probe.can_walk(candidate, steps)) {
      for (int i = 0; i < steps; ++i) probe.step(candidate);
      if (probe.can_walk(opposite(candidate), steps)) return candidate;
    }
  }
  return game::Action::kNone;
}

std::vector<game::Action> free_trip_path(const ReferenceRun& start, int steps, int run) {
  constexpr int kSearchBudget = 4096;  // runs tried before giving up
  const game::Action kTurns[] = {game::Action::kRight, game::Action::kLeft, game::Action::kDown,
                                 game::Action::kUp};
  std::vector<game::Action> path;
  std::set<std::pair<int, int>> visited{{start.game().player_x(), start.game().player_y()}};
  int budget = kSearchBudget;
  std::function<bool(const ReferenceRun&, game::Action)> extend = [&](const ReferenceRun& at,
                                                                      game::Action last) {
    if (static_cast<int>(path.size()) >= steps) return true;
    std::vector<game::Action> order;
    if (last != game::Action::kNone) order.push_back(last);
    for (game::Action turn : kTurns) {
      if (turn != last && turn != opposite(last)) order.push_back(turn);
    }
    for (game::Action action : order) {
      if (--budget < 0) return false;
      ReferenceRun next = at;
      std::vector<std::pair<int, int>> entered;
      bool free = true;
      for (int i = 0; i < run && free; ++i) {
        free = next.step(action) &&
               visited.insert({next.game().player_x(), next.game().player_y()}).second;
        if (free) entered.push_back({next.game().player_x(), next.game().player_y()});
      }
      if (free) {
        path.insert(path.end(), static_cast<size_t>(run), action);
        if (extend(next, action)) return true;
        path.resize(path.size() - static_cast<size_t>(run));
      }
      for (const auto& place : entered) visited.erase(place);
    }
    return false;
  };
  if (!extend(start, game::Action::kNone)) return {};
  return path;
}

int default_memory_steps(int64_t window_frames, int frames_per_block) {
  const int64_t f = frames_per_block;
  const int64_t k = window_frames <= 0 ? kUnboundedSteps : (window_frames - f) / 2;
  return static_cast<int>(std::max<int64_t>(f, k / f * f));  // whole blocks each way
}

nlohmann::json eval_memory(const EvalOptions& options) {
  auto session = make_eval_source(options, options.policy, options.seeds.front());
  const int width = session->width(), height = session->height();
  const int f = options.config.frames_per_block;
  // The policy's own window when it has one (it is what the trip must fit).
  rollout::Session* model = session_of(*session);
  const int64_t window = (model ? window_of(model->policy().settings()) : std::nullopt)
                             .value_or(eval_window_frames(options));
  const int k = options.memory_steps > 0 ? options.memory_steps : default_memory_steps(window, f);
  const bool fits = window == 0 || 2 * static_cast<int64_t>(k) <= window - f;
  const PhaseCorrelationOptions correlation = scroll_estimator(options, width, height);
  const at::Tensor mask = mask_excluding(width, height, correlation.ignore);

  double psnr_sum = 0.0, truth_sum = 0.0, return_sum = 0.0;
  int measured = 0;
  int64_t trip_steps = 0, trip_scrolled = 0;  // Note [Still trips]
  nlohmann::json per_seed = nlohmann::json::array(), skipped = nlohmann::json::array();
  for (uint64_t seed : options.seeds) {
    session->reset(seed);
    ReferenceRun truth(width, height, seed, options.seed_frames);
    for (int i = 0; i < f; ++i) truth.step(game::Action::kNone);  // O_0's state
    const game::Action direction = free_trip_direction(truth, k);
    if (direction == game::Action::kNone) {
      skipped.push_back(seed);
      report_progress(options, "memory: seed " + std::to_string(seed) + " skipped (no free way)");
      continue;
    }
    report_progress(options, "memory: seed " + std::to_string(seed) + ", " + std::to_string(k) +
                                 " steps " + game::action_name(direction) + " and back");
    std::vector<at::Tensor> out, out_true;  // O_0..O_{k-1}
    // One idle block; its last frame is O_0, where the trip starts and ends.
    for (int i = 0; i < f; ++i) session->step(game::Action::kNone);
    out.push_back(current_frame(*session));
    out_true.push_back(truth.frame());
    at::Tensor previous = out.back();
    int seed_scrolled = 0;
    const auto trip_step = [&](game::Action action) {
      session->step(action);
      truth.step(action);
      at::Tensor frame = current_frame(*session);
      seed_scrolled += camera_direction(estimate_shift(previous, frame, correlation)) == action;
      previous = frame;
      return frame;
    };
    for (int i = 1; i <= k; ++i) {
      const at::Tensor frame = trip_step(direction);
      if (i < k) {
        out.push_back(frame);
        out_true.push_back(truth.frame());
      }
    }
    double seed_psnr = 0.0, seed_truth = 0.0;
    for (int j = k - 1; j >= 0; --j) {
      const at::Tensor frame = trip_step(opposite(direction));
      const double p = psnr(frame, out[static_cast<size_t>(j)], mask);
      const double t = psnr(truth.frame(), out_true[static_cast<size_t>(j)], mask);
      seed_psnr += p / k;
      seed_truth += t / k;
      if (j == 0) return_sum += p;
    }
    psnr_sum += seed_psnr;
    truth_sum += seed_truth;
    ++measured;
    trip_steps += 2 * k;
    trip_scrolled += seed_scrolled;
    per_seed.push_back({{"seed", seed},
                        {"direction", game::action_name(direction)},
                        {"psnr_db", seed_psnr},
                        {"truth_psnr_db", seed_truth},
                        {"scrolled_steps", seed_scrolled}});
  }
  const auto mean = [measured](double sum) -> nlohmann::json {
    if (measured == 0) return nullptr;
    return sum / measured;
  };
  return {{"policy", options.policy},
          {"steps", k},
          {"scroll_pixels", k * game::kPlayerSpeed},
          {"window_frames", window},
          {"fits_window", fits},
          {"psnr_db", mean(psnr_sum)},
          {"truth_psnr_db", mean(truth_sum)},
          {"return_psnr_db", mean(return_sum)},
          {"trip_steps", trip_steps},
          {"trip_scrolled_share",
           trip_steps == 0 ? nlohmann::json(nullptr)
                           : nlohmann::json(static_cast<double>(trip_scrolled) / trip_steps)},
          {"excluded", "player sprite and HUD"},
          {"per_seed", per_seed},
          {"skipped_seeds", skipped}};
}

}  // namespace wc::eval
