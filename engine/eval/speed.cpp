// See speed.h.
#include "engine/eval/speed.h"

#include <algorithm>
#include <vector>

#include "engine/core/timing.h"
#include "engine/eval/eval_session.h"

namespace wc::eval {
namespace {

constexpr uint64_t kActionSalt = 0x7370656564ull;  // "speed"

double mean_of(const std::vector<double>& values) {
  double sum = 0.0;
  for (double v : values) sum += v;
  return values.empty() ? 0.0 : sum / static_cast<double>(values.size());
}

}  // namespace

nlohmann::json eval_speed(const EvalOptions& options) {
  const int f = options.config.frames_per_block;
  const int64_t window = eval_window_frames(options);
  const int warmup =
      options.speed_warmup >= 0 ? options.speed_warmup : static_cast<int>(window) + 2 * f;
  const uint64_t seed = options.seeds.front();
  std::vector<std::string> names{"dense"};
  for (const std::string& name : options.policies) {
    if (std::find(names.begin(), names.end(), name) == names.end()) names.push_back(name);
  }
  if (std::find(names.begin(), names.end(), options.policy) == names.end()) {
    names.push_back(options.policy);
  }
  const auto actions = eval_actions(options, seed ^ kActionSalt, warmup + options.speed_frames);
  nlohmann::json rows = nlohmann::json::array();
  for (const std::string& name : names) {
    report_progress(options, "speed: " + name);
    auto session = make_eval_source(options, name, seed);
    std::vector<double> frame_ms, model_ms, decode_ms;
    for (size_t i = 0; i < actions.size(); ++i) {
      Stopwatch clock;
      session->step(actions[i]);
      const double elapsed = clock.elapsed_ms();
      if (static_cast<int>(i) < warmup) continue;
      frame_ms.push_back(elapsed);
      if (const rollout::Session* model = session_of(*session)) {
        const rollout::SessionStats stats = model->stats();
        model_ms.push_back(stats.model_ms);
        decode_ms.push_back(stats.decode_ms);
      }
    }
    const double mean_ms = mean_of(frame_ms);
    attention::PolicyStats policy;
    int64_t replayed_blocks = 0;  // Note [Block graph]
    if (rollout::Session* model = session_of(*session)) {
      policy = model->policy().stats();
      replayed_blocks = model->stats().graph_replayed_blocks;
    }
    rows.push_back(
        {{"policy", name},
         {"frames", options.speed_frames},
         {"warmup_frames", warmup},
         {"fps", mean_ms > 0.0 ? 1000.0 / mean_ms : 0.0},
         {"frame_ms_mean", mean_ms},
         {"frame_ms_p50", percentile(frame_ms, 50.0)},
         {"frame_ms_p99", percentile(frame_ms, 99.0)},
         {"frame_ms_max", percentile(frame_ms, 100.0)},
         {"model_ms_mean", mean_of(model_ms)},
         {"decode_ms_mean", mean_of(decode_ms)},
         {"graph_replayed_blocks", replayed_blocks},
         {"cache_tokens", policy.total_tokens()},
         {"cache_bytes", policy.total_bytes()},
         // AnnSA's share of the history's (query, key) pairs attended; null without it.
         {"history_kept", policy.ann.history_pairs > 0.0 ? nlohmann::json(policy.ann.kept_share())
                                                         : nlohmann::json()}});
  }
  return {{"seed", seed}, {"rows", rows}};
}

}  // namespace wc::eval
