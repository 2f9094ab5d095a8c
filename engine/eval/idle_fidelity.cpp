// See idle_fidelity.h.
#include "engine/eval/idle_fidelity.h"

#include <algorithm>
#include <vector>

#include "engine/eval/eval_session.h"
#include "engine/eval/psnr.h"
#include "engine/eval/reference_run.h"
#include "engine/eval/ssim.h"

namespace wc::eval {

nlohmann::json eval_idle_fidelity(const EvalOptions& options) {
  auto session = make_eval_source(options, options.policy, options.seeds.front());
  const size_t frames = static_cast<size_t>(options.idle_frames);
  std::vector<double> psnr_by_frame(frames, 0.0), ssim_by_frame(frames, 0.0);
  double psnr_min = kPsnrCapDb;
  nlohmann::json per_seed = nlohmann::json::array();
  for (uint64_t seed : options.seeds) {
    report_progress(options, "idle: seed " + std::to_string(seed));
    session->reset(seed);
    ReferenceRun truth(session->width(), session->height(), seed, options.seed_frames);
    double psnr_sum = 0.0, ssim_sum = 0.0;
    for (size_t i = 0; i < frames; ++i) {
      session->step(game::Action::kNone);
      truth.step(game::Action::kNone);
      const at::Tensor frame = current_frame(*session), frame_true = truth.frame();
      const double p = psnr(frame, frame_true), s = ssim(frame, frame_true);
      psnr_by_frame[i] += p;
      ssim_by_frame[i] += s;
      psnr_sum += p;
      ssim_sum += s;
      psnr_min = std::min(psnr_min, p);
    }
    per_seed.push_back({{"seed", seed},
                        {"psnr_db", psnr_sum / static_cast<double>(frames)},
                        {"ssim", ssim_sum / static_cast<double>(frames)}});
  }
  const double seeds = static_cast<double>(options.seeds.size());
  double psnr_mean = 0.0, ssim_mean = 0.0;
  for (size_t i = 0; i < frames; ++i) {
    psnr_by_frame[i] /= seeds;
    ssim_by_frame[i] /= seeds;
    psnr_mean += psnr_by_frame[i];
    ssim_mean += ssim_by_frame[i];
  }
  psnr_mean /= static_cast<double>(frames);
  ssim_mean /= static_cast<double>(frames);
  return {{"policy", options.policy},
          {"frames", options.idle_frames},
          {"psnr_db", psnr_mean},
          {"psnr_min_db", psnr_min},
          {"psnr_first_db", psnr_by_frame.front()},
          {"psnr_last_db", psnr_by_frame.back()},
          {"ssim", ssim_mean},
          {"psnr_by_frame", psnr_by_frame},
          {"per_seed", per_seed}};
}

}  // namespace wc::eval
