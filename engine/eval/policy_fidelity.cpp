// See policy_fidelity.h.
#include "engine/eval/policy_fidelity.h"

#include <algorithm>
#include <memory>
#include <vector>

#include "engine/attention/headcast/head_type.h"
#include "engine/eval/eval_session.h"
#include "engine/eval/flicker.h"
#include "engine/eval/psnr.h"
#include "engine/eval/ssim.h"

namespace wc::eval {
namespace {

constexpr uint64_t kActionSalt = 0x706F6C696379ull;  // "policy"

struct PolicyRun {
  PolicyRun(std::string n, std::unique_ptr<FrameSource> s)
      : name(std::move(n)), session(std::move(s)) {}
  std::string name;
  std::unique_ptr<FrameSource> session;
  FrameDifferences differences;
  double psnr_sum = 0.0, ssim_sum = 0.0, psnr_min = kPsnrCapDb;
  int64_t compared = 0;
};

nlohmann::json optional_json(const std::optional<double>& value) {
  return value ? nlohmann::json(*value) : nlohmann::json(nullptr);
}

nlohmann::json score_json(float score) {
  return score == score ? nlohmann::json(score) : nlohmann::json(nullptr);
}

// Every head's type and classification scores, [layer][head], so a report says exactly which
// heads were cast how and on what evidence (null scores: never classified, or forced).
nlohmann::json cast_table(const attention::PolicyStats& stats) {
  nlohmann::json layers = nlohmann::json::array();
  for (const auto& layer : stats.heads) {
    nlohmann::json heads = nlohmann::json::array();
    for (const attention::HeadStats& head : layer) {
      heads.push_back({{"type", attention::head_type_name(head.type)},
                       {"sink", score_json(head.scores.sink)},
                       {"dummy", score_json(head.scores.dummy)},
                       {"spatial_mean", score_json(head.scores.spatial_mean)},
                       {"spatial_score", score_json(head.scores.spatial_score)}});
    }
    layers.push_back(heads);
  }
  return layers;
}

// The policy's cast and cache at the end of the last seed (a Session only).
nlohmann::json cast_summary(FrameSource& source) {
  rollout::Session* session = session_of(source);
  if (!session) return nlohmann::json::object();
  const attention::PolicyStats stats = session->policy().stats();
  return {{"settings", session->policy().settings()},
          {"classified", stats.classified},
          {"heads_by_type", attention::head_type_counts(stats.cast())},
          {"cast", cast_table(stats)},
          {"cache_tokens", stats.total_tokens()},
          {"cache_bytes", stats.total_bytes()}};
}

std::vector<at::Tensor> roll_out(FrameSource& session, uint64_t seed,
                                 const std::vector<game::Action>& actions) {
  session.reset(seed);
  std::vector<at::Tensor> frames;
  frames.reserve(actions.size());
  for (game::Action action : actions) {
    session.step(action);
    frames.push_back(current_frame(session));
  }
  return frames;
}

}  // namespace

nlohmann::json eval_policies(const EvalOptions& options) {
  const int f = options.config.frames_per_block;
  const int64_t window = eval_window_frames(options);
  const int skip = options.policy_skip >= 0 ? options.policy_skip : static_cast<int>(window) + f;
  const size_t first = static_cast<size_t>(std::min(skip, options.policy_frames - 1));

  PolicyRun dense{"dense", make_eval_source(options, "dense", options.seeds.front())};
  std::vector<PolicyRun> runs;
  for (const std::string& name : options.policies) {
    if (name == "dense") continue;  // the reference itself
    runs.emplace_back(name, make_eval_source(options, name, options.seeds.front()));
  }
  for (uint64_t seed : options.seeds) {
    const auto actions = eval_actions(options, seed ^ kActionSalt, options.policy_frames);
    report_progress(options, "policies: seed " + std::to_string(seed) + ", dense");
    const std::vector<at::Tensor> reference = roll_out(*dense.session, seed, actions);
    dense.differences.add_sequence(
        {reference.begin() + static_cast<ptrdiff_t>(first), reference.end()}, f,
        static_cast<int64_t>(first));
    for (PolicyRun& run : runs) {
      report_progress(options, "policies: seed " + std::to_string(seed) + ", " + run.name);
      const std::vector<at::Tensor> frames = roll_out(*run.session, seed, actions);
      for (size_t i = first; i < frames.size(); ++i) {
        const double p = psnr(frames[i], reference[i]);
        run.psnr_sum += p;
        run.ssim_sum += ssim(frames[i], reference[i]);
        run.psnr_min = std::min(run.psnr_min, p);
        ++run.compared;
      }
      run.differences.add_sequence({frames.begin() + static_cast<ptrdiff_t>(first), frames.end()},
                                   f, static_cast<int64_t>(first));
    }
  }

  nlohmann::json rows = nlohmann::json::array();
  nlohmann::json dense_row = {
      {"policy", "dense"},
      {"frame_difference", optional_json(dense.differences.boundary_mean())},
      {"block_flicker", optional_json(block_flicker(dense.differences))}};
  dense_row.update(cast_summary(*dense.session));
  rows.push_back(dense_row);
  for (const PolicyRun& run : runs) {
    const double n = static_cast<double>(std::max<int64_t>(run.compared, 1));
    nlohmann::json row = {{"policy", run.name},
                          {"psnr_db", run.psnr_sum / n},
                          {"psnr_min_db", run.psnr_min},
                          {"ssim", run.ssim_sum / n},
                          {"compared_frames", run.compared},
                          {"frame_difference", optional_json(run.differences.boundary_mean())},
                          {"flicker_vs_dense",
                           optional_json(flicker_vs_reference(run.differences, dense.differences))},
                          {"block_flicker", optional_json(block_flicker(run.differences))}};
    row.update(cast_summary(*run.session));
    rows.push_back(row);
  }
  return {{"frames_per_seed", options.policy_frames},
          {"skipped_frames", static_cast<int>(first)},
          {"window_frames", window},
          {"rows", rows}};
}

}  // namespace wc::eval
