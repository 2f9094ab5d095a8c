// See stability.h.
#include "engine/eval/stability.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <numeric>
#include <string>
#include <vector>

#include "engine/core/timing.h"
#include "engine/eval/eval_session.h"
#include "engine/eval/frame_tensor.h"
#include "engine/eval/player_actions.h"
#include "engine/eval/psnr.h"
#include "engine/eval/reference_run.h"
#include "engine/game/game.h"
#include "engine/game/render.h"

namespace wc::eval {
namespace {

constexpr uint64_t kActionSalt = 0x737461626C65ull;  // "stable"

struct Probe {
  std::vector<at::Tensor> frames;
  std::vector<at::Tensor> truth;
};

double self_psnr(const std::vector<at::Tensor>& frames) {
  double mse = 0.0;
  for (size_t i = 1; i < frames.size(); ++i) mse += mean_squared_error(frames[i], frames[0]);
  return psnr_from_mse(mse / static_cast<double>(frames.size() - 1));
}

double mean_detail(const std::vector<at::Tensor>& frames) {
  double sum = 0.0;
  for (const at::Tensor& frame : frames) sum += mean_gradient(frame);
  return sum / static_cast<double>(frames.size());
}

// A bool [H, W] mask of `frame`'s size, true inside `rects` (clipped to the frame).
at::Tensor inside_of(const at::Tensor& frame, const std::vector<game::PixelRect>& rects) {
  return mask_excluding(static_cast<int>(frame.size(1)), static_cast<int>(frame.size(0)), rects)
      .logical_not();
}

// Of the probe's idle change (squared difference of frames 1..M−1 from frame 0), the share that
// lies inside the game's screen-fixed overlays (the sprite and the HUD); null when nothing changed.
nlohmann::json change_in_overlays(const std::vector<at::Tensor>& frames) {
  const int64_t h = frames[0].size(0), w = frames[0].size(1);
  const at::Tensor inside =
      inside_of(frames[0], game::screen_overlays(static_cast<int>(w), static_cast<int>(h)));
  at::Tensor change = at::zeros({h, w}, at::kDouble);
  for (size_t i = 1; i < frames.size(); ++i)
    change += (rgb_planes(frames[i]) - rgb_planes(frames[0])).pow(2).sum(0);
  const double total = change.sum().item<double>();
  if (total <= 0.0) return nullptr;
  return change.masked_select(inside).sum().item<double>() / total;
}

// The mean PSNR of a probe's generated frames against the true ones inside the player sprite's
// rectangle (the first of game::screen_overlays): how much of the sprite survived, whatever the
// scene around it (the idle self-PSNR depends on how much water is in view).
double sprite_psnr(const Probe& probe) {
  const at::Tensor& first = probe.frames[0];
  const game::PixelRect sprite =
      game::screen_overlays(static_cast<int>(first.size(1)), static_cast<int>(first.size(0)))
          .front();
  const at::Tensor inside = inside_of(first, {sprite});
  double sum = 0.0;
  for (size_t i = 0; i < probe.frames.size(); ++i)
    sum += psnr(probe.frames[i], probe.truth[i], inside);
  return sum / static_cast<double>(probe.frames.size());
}

std::vector<double> mean_rgb(const std::vector<at::Tensor>& frames) {
  at::Tensor sum = at::zeros({3}, at::kDouble);
  for (const at::Tensor& frame : frames) sum += rgb_planes(frame).mean({1, 2});
  sum /= static_cast<double>(frames.size());
  return {sum[0].item<double>(), sum[1].item<double>(), sum[2].item<double>()};
}

// The generated block before quantisation (a NaN would decode to a plausible-looking colour).
// Sources other than a Session produce bytes only: always finite.
// Player-like actions out, then the path walked back (the moves the game made, reversed), about
// `frames` in all, held per block. See Note [Stability probe].
std::vector<game::Action> round_trip(const EvalOptions& options, const ReferenceRun& start,
                                     uint64_t seed, int frames) {
  ReferenceRun sim = start;
  const std::vector<game::Action> random = eval_actions(options, seed, frames);
  std::vector<game::Action> actions, moves;
  for (size_t i = 0; i < random.size() && actions.size() + moves.size() < random.size(); ++i) {
    actions.push_back(random[i]);
    if (sim.step(random[i])) moves.push_back(random[i]);
  }
  for (auto it = moves.rbegin(); it != moves.rend(); ++it) actions.push_back(opposite(*it));
  // Whole blocks, and both probes at the same phase of the water animation's step: the end
  // probe starts probe + actions frames after the start probe.
  const size_t f = static_cast<size_t>(options.config.frames_per_block);
  const size_t probe = static_cast<size_t>(options.stability_probe_frames);
  const size_t period = std::lcm(f, static_cast<size_t>(game::kWaveFramesPerPixel));
  while (actions.size() % f != 0 || (probe + actions.size()) % period != 0) {
    actions.push_back(game::Action::kNone);
  }
  for (size_t i = 0; i < actions.size(); ++i) actions[i] = actions[i - i % f];
  return actions;
}

// Hands both probes, generated and true, to options.keep_frame ("stability_end_truth_03").
void keep_probes(const EvalOptions& options, const Probe& start, const Probe& end) {
  if (!options.keep_frame) return;
  const auto keep = [&](const char* which, const std::vector<at::Tensor>& frames) {
    for (size_t i = 0; i < frames.size(); ++i) {
      char index[24];
      std::snprintf(index, sizeof index, "%02zu", i);
      options.keep_frame(std::string("stability_") + which + "_" + index, frames[i]);
    }
  };
  keep("start", start.frames);
  keep("start_truth", start.truth);
  keep("end", end.frames);
  keep("end_truth", end.truth);
}

// Hands the rollout's frame `index` (1-based), generated and true, to options.keep_frame
// ("stability_rollout_05000", "stability_rollout_truth_05000"): where between the probes a
// model's world or sprite went wrong.
void keep_rollout_frame(const EvalOptions& options, int index, const FrameSource& source,
                        const ReferenceRun& truth) {
  if (!options.keep_frame) return;
  char number[24];
  std::snprintf(number, sizeof number, "%05d", index);
  options.keep_frame(std::string("stability_rollout_") + number, current_frame(source));
  options.keep_frame(std::string("stability_rollout_truth_") + number, truth.frame());
}

bool finite_block(FrameSource& source) {
  const rollout::Session* session = session_of(source);
  return !session || at::isfinite(session->last_block()).all().item<bool>();
}

}  // namespace

nlohmann::json eval_stability(const EvalOptions& options) {
  const uint64_t seed = options.seeds.front();
  auto session = make_eval_source(options, options.policy, seed);
  ReferenceRun truth(session->width(), session->height(), seed, options.seed_frames);
  int64_t non_finite = 0, generated = 0;
  const auto probe = [&] {
    Probe p;
    for (int i = 0; i < options.stability_probe_frames; ++i) {
      session->step(game::Action::kNone);
      truth.step(game::Action::kNone);
      non_finite += !finite_block(*session);
      ++generated;
      p.frames.push_back(current_frame(*session));
      p.truth.push_back(truth.frame());
    }
    return p;
  };

  report_progress(options, "stability: seed " + std::to_string(seed) + ", start probe");
  const Probe start = probe();
  const int start_x = truth.game().player_x(), start_y = truth.game().player_y();
  const std::vector<game::Action> actions =
      round_trip(options, truth, seed ^ kActionSalt, options.stability_frames);
  Stopwatch clock;
  const int report_every = std::max(1, options.stability_frames / 10);
  for (size_t i = 0; i < actions.size(); ++i) {
    session->step(actions[i]);
    truth.step(actions[i]);
    non_finite += !finite_block(*session);
    ++generated;
    if ((static_cast<int>(i) + 1) % report_every == 0) {
      report_progress(options, "stability: " + std::to_string(i + 1) + "/" +
                                   std::to_string(actions.size()) + " frames, " +
                                   std::to_string(non_finite) + " non-finite");
      keep_rollout_frame(options, static_cast<int>(i) + 1, *session, truth);
    }
  }
  const double rollout_ms = clock.elapsed_ms();
  const bool returned = truth.game().player_x() == start_x && truth.game().player_y() == start_y;
  const Probe end = probe();
  keep_probes(options, start, end);

  double vs_truth = 0.0;
  for (size_t i = 0; i < start.frames.size(); ++i)
    vs_truth += psnr(start.frames[i], start.truth[i]);
  vs_truth /= static_cast<double>(start.frames.size());
  const double start_db = self_psnr(start.frames), end_db = self_psnr(end.frames);
  const double start_detail = mean_detail(start.frames);
  const double delta = end_db - start_db;
  return {
      {"policy", options.policy},
      {"seed", seed},
      {"frames", static_cast<int64_t>(actions.size())},
      {"returned_to_start", returned},
      {"generated_frames", generated},
      {"probe_frames", options.stability_probe_frames},
      {"non_finite_blocks", non_finite},
      {"finite", non_finite == 0},
      {"idle_self_psnr_start_db", start_db},
      {"idle_self_psnr_end_db", end_db},
      {"delta_db", delta},
      {"within_1db", std::abs(delta) <= 1.0},
      {"truth_idle_self_psnr_start_db", self_psnr(start.truth)},
      {"truth_idle_self_psnr_end_db", self_psnr(end.truth)},
      {"idle_psnr_vs_truth_start_db", vs_truth},
      {"detail_ratio", start_detail > 0.0 ? nlohmann::json(mean_detail(end.frames) / start_detail)
                                          : nlohmann::json(nullptr)},
      {"sprite_psnr_vs_truth_start_db", sprite_psnr(start)},
      {"sprite_psnr_vs_truth_end_db", sprite_psnr(end)},
      {"idle_change_in_overlays_start", change_in_overlays(start.frames)},
      {"idle_change_in_overlays_end", change_in_overlays(end.frames)},
      {"mean_rgb_start", mean_rgb(start.frames)},
      {"mean_rgb_end", mean_rgb(end.frames)},
      {"rollout_fps",
       rollout_ms > 0.0 ? 1000.0 * static_cast<double>(actions.size()) / rollout_ms : 0.0}};
}

}  // namespace wc::eval
